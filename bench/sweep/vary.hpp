#pragma once
// --vary FIELD=START:STOP[:STEP]: more layers, made from each base layer by changing fields.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace convbench {

/// One --vary FIELD=START:STOP[:STEP] axis: STEP is +N (default 1) or *N.
struct VaryAxis {
  std::string field;
  std::vector<int64_t> values;
  std::string text;  ///< as given
};
/// Parses one --vary; UsageError naming the bad part. Fields are benchdnn keys (mb, g, ic,
/// ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw).
VaryAxis parse_vary(const std::string& text);

/// UsageError when `bases` x the product of the axes' lengths (each combination at least one
/// case) exceeds `max_cases`, before any combination is made.
void check_vary_size(std::size_t bases, const std::vector<VaryAxis>& axes, int64_t max_cases);

/// The Cartesian product of the axes over each base descriptor: every combination as a
/// descriptor whose name lists the values ("kh=5 ih=32"). Combinations that are no valid
/// convolution go to `skipped` with the reason, not into the result.
std::vector<std::string> expand_vary(const std::vector<std::string>& bases,
                                     const std::vector<VaryAxis>& axes,
                                     std::vector<std::string>& skipped);

}  // namespace convbench
