#pragma once
// The launch shape every grid-stride kernel of cuda/ uses: 256 threads a block, and enough
// blocks to fill any current device several times over; the loops stride over the rest.

#include <cstdint>

namespace convlab::cuda {

constexpr int kThreads = 256;

/// Blocks for `elements` one-element-per-thread items, at least 1, at most 65535 * 8.
inline unsigned grid_for(int64_t elements) {
  const int64_t blocks = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 8 ? (blocks > 0 ? blocks : 1) : 65535 * 8);
}

}  // namespace convlab::cuda
