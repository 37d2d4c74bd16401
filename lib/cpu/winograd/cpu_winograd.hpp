#pragma once
// cpu.winograd internals: the per-plan layout (the tiles, the chunk and the workspace formula
// of docs/strategy-winograd.md, in code) and the error bound of one variant. Not a public
// header; the tests include it to check the formula and the bound of each variant.

#include <cstddef>
#include <cstdint>
#include <string>

#include "convlab/accuracy.hpp"
#include "convlab/problem.hpp"

namespace convlab::winograd {

/// The correlation a plan runs per group, in source/destination terms: forward reads x and
/// writes y; backward-data reads dy and writes dx (the flipped filter, padding 2 - p);
/// backward-filter reads x and tiles dy (its "destination" is the tile grid of dy).
struct WinogradLayout {
  int m = 4;                           ///< output tile (F(m x m, 3 x 3))
  int alpha = 6;                       ///< input tile m + 2
  int64_t src_channels = 0;            ///< per group: C/g (forward, bwd_filter) or K/g (bwd_data)
  int64_t dst_channels = 0;            ///< per group: K/g (forward, bwd_filter) or C/g (bwd_data)
  int64_t src_h = 0, src_w = 0;        ///< source image size
  int64_t dst_h = 0, dst_w = 0;        ///< destination (tiled) image size
  int64_t offset_h = 0, offset_w = 0;  ///< dst row 0's first tap reads source row -offset
  int64_t tiles_h = 0, tiles_w = 0;    ///< ceil(dst / m)
  int64_t tiles = 0;                   ///< per group: images * tiles_h * tiles_w
  int64_t chunk = 0;                   ///< tiles transformed and multiplied together
  int64_t filter_point = 0;            ///< pad16(K/g * C/g) + kPointSkew: U[xi] to U[xi + 1]
  int64_t input_point = 0;             ///< pad16(src_channels * chunk) + kPointSkew
  int64_t product_point = 0;           ///< pad16(dst_channels * chunk) + kPointSkew
  int64_t filter_floats = 0;           ///< alpha^2 * filter_point
  int64_t input_floats = 0;            ///< alpha^2 * input_point
  int64_t product_floats = 0;          ///< alpha^2 * product_point
  int64_t workers = 1;                 ///< threads taking whole chunks, min(T, chunks)
  std::size_t workspace_bytes = 0;  ///< 4 * (filter * (1 + partials) + workers * (input + product))
};

/// Tiles per chunk when the `tiles` knob is auto: as many as keep the chunk's transformed
/// input and products within kChunkBytes, but at least kMinChunk (narrower per-point GEMMs
/// spend more of their time packing U, the larger operand when channels are many), and at
/// most tiles / threads rounded up (every thread gets a chunk), at most all tiles.
inline constexpr int64_t kChunkBytes = std::int64_t{2} << 20;
inline constexpr int64_t kMinChunk = 128;
/// Floats (one cache line) added between the matrices of consecutive transform points.
inline constexpr int64_t kPointSkew = 16;

/// The layout of (problem, pass) with output tile m, `chunk` tiles per chunk (0 = auto) and
/// `threads` threads (at most one worker per chunk).
WinogradLayout winograd_layout(const ConvProblem& problem, Pass pass, int m, int64_t chunk,
                               int threads);

/// The normwise bound of F(m x m, 3 x 3) for (problem, pass) (derived in cpu_winograd.cpp).
ErrorBound winograd_error_bound(const ConvProblem& problem, Pass pass, int m);

}  // namespace convlab::winograd
