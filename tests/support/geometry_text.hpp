#pragma once
// How the im2col strategy tests name a column buffer's geometry in their failure messages.

#include <string>

#include "strategy/im2col_index.hpp"

namespace convlab::testing {

inline std::string describe(const Im2colGeometry& g) {
  return "C " + std::to_string(g.channels) + ", " + std::to_string(g.in_h) + "x" +
         std::to_string(g.in_w) + " -> " + std::to_string(g.out_h) + "x" + std::to_string(g.out_w) +
         ", kernel " + std::to_string(g.kernel_h) + "x" + std::to_string(g.kernel_w) + ", pad " +
         std::to_string(g.pad_h) + "/" + std::to_string(g.pad_w) + ", stride " +
         std::to_string(g.stride_h) + "/" + std::to_string(g.stride_w) + ", dilation " +
         std::to_string(g.dilation_h) + "/" + std::to_string(g.dilation_w);
}

}  // namespace convlab::testing
