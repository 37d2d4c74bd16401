#pragma once
// What every Winograd algorithm decides on the host the same way, whatever runs its transforms
// and GEMMs: the shapes it refuses and why, its knobs (variant, tiles) read into the
// WinogradOptions of winograd_geometry.hpp, its error bound (derived at the top of
// lib/cpu/winograd/cpu_winograd.cpp) and the PlanInfo of a plan. Never compiled for a device.

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/knobs.hpp"
#include "strategy/winograd_geometry.hpp"
#include "strategy/winograd_toom_cook.hpp"
#include "strategy/winograd_transform.hpp"

namespace convlab::winograd {

/// Whether F(m x m, 3 x 3) covers the (valid) problem: 3x3, stride 1, dilation 1. The reason
/// names the algorithm, the problem and the value it cannot take.
inline Support winograd_shape_support(const std::string& algorithm, const ConvProblem& p) {
  const std::string prefix = algorithm + " " + p.descriptor() + ": ";
  if (p.r != 3 || p.s != 3) {
    return Support::no(prefix + "kernel " + std::to_string(p.r) + "x" + std::to_string(p.s) +
                       "; F(m x m, 3 x 3) is implemented for 3x3 kernels only");
  }
  if (p.stride_h != 1 || p.stride_w != 1) {
    return Support::no(prefix + "stride " + std::to_string(p.stride_h) + "x" +
                       std::to_string(p.stride_w) +
                       "; Winograd tiles assume stride 1 (a strided layer would compute and "
                       "drop most outputs)");
  }
  if (p.dilation_h != 1 || p.dilation_w != 1) {
    return Support::no(prefix + "dilation " + std::to_string(p.dilation_h) + "x" +
                       std::to_string(p.dilation_w) + "; F(m x m, 3 x 3) needs dense taps");
  }
  return Support::yes();
}

inline const char* const kWinogradVariants[] = {"f2", "f4"};

/// The variant and tiles knobs; `auto_chunk` says what auto means for this executor's tiles.
inline std::vector<KnobSpec> winograd_knobs(const std::string& auto_chunk) {
  return {KnobSpec{"variant",
                   KnobType::choice,
                   "f4",
                   {kWinogradVariants[0], kWinogradVariants[1]},
                   0,
                   0,
                   false,
                   "",
                   "output tile m of F(m x m, 3 x 3): f2 (error growth ~40) or f4 (~674, "
                   "2.25 instead of 4 multiplies per output)"},
          KnobSpec{"tiles",
                   KnobType::integer,
                   "auto",
                   {},
                   1,
                   INT_MAX,
                   true,
                   "",
                   "tiles transformed and multiplied together (bounds the workspace); auto: " +
                       auto_chunk}};
}

/// The options of resolved knobs: m from `variant`, the chunk from `tiles` (0 = auto); the
/// rest (chunk bytes, workers, alignment, library scratch) is the executor's.
inline WinogradOptions winograd_options(const KnobValues& knobs, WinogradOptions base) {
  base.m = knob_text(knobs, "variant") == "f2" ? 2 : 4;
  base.chunk = knob_integer(knobs, "tiles").value_or(0);
  return base;
}

/// The normwise bound of F(m x m, r x r) with growth factor `beta` for (problem, pass), with
/// `partial_sums` per-worker dU partials added at the end of backward-filter (the CPU's
/// threads; 1 on the GPU). The derivation (for r = 3) is in lib/cpu/winograd/cpu_winograd.cpp;
/// r enters only the filter transform's chain (2 (r + 1)) and m, alpha the tile overlap (an
/// input lies in at most ceil(alpha / m) tiles per dimension). No fitted constant.
inline ErrorBound winograd_error_bound(const ConvProblem& p, Pass pass, int m, int r, double beta,
                                       int64_t partial_sums) {
  const double alpha = m + r - 1;
  const double filter_chain = 2.0 * (r + 1);
  double chain = 0;
  switch (pass) {
    case Pass::forward:
      chain = 4 * alpha + filter_chain + 1 + double(p.c_per_group());
      break;
    case Pass::backward_data:
      chain = 4 * alpha + filter_chain + 1 + double(p.k_per_group());
      break;
    case Pass::backward_filter: {
      // Tiles per group, at most as many chunks, and the sum of the workers' partials.
      const double tiles = double(p.n) * tiles_along(p.out_h(), m) * tiles_along(p.out_w(), m);
      chain = 2 * m + 4 * alpha + 3 + 2 * tiles + double(partial_sums);
      break;
    }
  }
  const double overlap = std::ceil(alpha / m);
  return ErrorBound{ErrorBound::Kind::normwise, overlap * beta * 6 * std::sqrt(chain) + 3, 0.0};
}

/// The bound of our F(m x m, 3 x 3), m = 2 or 4 (winograd_transform.hpp's tables).
inline ErrorBound winograd_error_bound(const ConvProblem& p, Pass pass, int m,
                                       int64_t partial_sums) {
  const double beta = m == 2 ? growth_factor<2>() : growth_factor<4>();
  return winograd_error_bound(p, pass, m, 3, beta, partial_sums);
}

/// The bound of a Winograd whose tile is not known (a vendor's: cuDNN does not say which
/// F(m, r) it runs): that of the largest tile in use in the published Winograd convolution
/// kernels, alpha = 8 points per dimension (F(6x6,3x3), F(4x4,5x5)), whose growth bounds that of
/// the smaller tiles (winograd_toom_cook.hpp), with the Toom-Cook points of the construction
/// there. For an r >= 8 kernel, F(1, r). `partial_sums`: as above.
inline ErrorBound vendor_winograd_error_bound(const ConvProblem& p, Pass pass,
                                              int64_t partial_sums) {
  const int r = static_cast<int>(std::max<int64_t>(1, std::max(p.r, p.s)));
  const int m = std::max(1, 9 - r);
  return winograd_error_bound(p, pass, m, r, growth_factor(toom_cook(m, r)), partial_sums);
}

/// The bound when the knobs are not known: the larger of the two variants'.
inline ErrorBound winograd_worst_error_bound(const ConvProblem& p, Pass pass,
                                             int64_t partial_sums) {
  const ErrorBound f2 = winograd_error_bound(p, pass, 2, partial_sums);
  const ErrorBound f4 = winograd_error_bound(p, pass, 4, partial_sums);
  return f2.factor > f4.factor ? f2 : f4;
}

/// The plan info every Winograd plan reports: the transform, the tile, the workspace split
/// (summing to the workspace: the library scratch and its alignment gap, when there is one,
/// go first under the name `library`) and the tiling. An executor sets kernel and math mode,
/// and may append details.
inline void describe_winograd_plan(const WinogradLayout& l, PlanInfo& info,
                                   const char* library = "library") {
  info.transform = l.m == 2 ? "F(2x2,3x3)" : "F(4x4,3x3)";
  info.tile = std::to_string(l.m) + "x" + std::to_string(l.m);
  const auto inputs = static_cast<std::size_t>(l.input_buffers);
  const auto filters = static_cast<std::size_t>(l.filter_buffers + l.partials);
  info.workspace_split = {
      {"filter_transform", 4 * filters * static_cast<std::size_t>(l.filter_floats)},
      {"input_transform", 4 * inputs * static_cast<std::size_t>(l.input_floats)},
      {"products", 4 * inputs * static_cast<std::size_t>(l.product_floats)}};
  if (l.filter_offset > 0) {
    info.workspace_split.insert(info.workspace_split.begin(),
                                {library, static_cast<std::size_t>(l.filter_offset)});
  }
  info.details = {
      {"tiles_per_image", std::to_string(l.tiles_h) + "x" + std::to_string(l.tiles_w)},
      {"tiles_per_chunk", std::to_string(l.chunk)},
      {"chunk_workers", std::to_string(l.workers)},
      {"filter_rows", l.filter_rows < l.dst_channels
                          ? std::to_string(l.filter_rows) + " per block, per chunk"
                          : "all, once per group"},
      {"growth_factor", std::to_string(l.m == 2 ? growth_factor<2>() : growth_factor<4>())}};
}

}  // namespace convlab::winograd
