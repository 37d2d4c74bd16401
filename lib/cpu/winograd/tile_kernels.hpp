#pragma once
// cpu.winograd's tile transforms on runs of consecutive tiles, compiled once per instruction
// set (tile_kernels.inc) and chosen at run time (cpu/isa.hpp). A run's tiles are the SIMD
// lanes: tile i of the run is lane i % L of vector i / L (L = cpu_isa_vector_floats(isa)), so
// the transform points of consecutive tiles are stored contiguously, the layout the per-point
// GEMMs read. A run may cross tile rows and images (segments), so that a small image (7x7 is
// 2 x 2 tiles of F(4,3)) still fills whole vectors.

#include <cstdint>

#include "cpu/isa.hpp"

namespace convlab::winograd {

/// The most tiles one kernel call takes (a multiple of every ISA's vector).
inline constexpr int64_t kMaxRunTiles = 64;

/// Consecutive tiles along one tile row of one plane: the plane starts `plane` floats after the
/// kernel's base pointer; tile i covers plane rows [row, row + extent) and columns
/// [col + i m, col + i m + extent), extent = alpha for an input patch, m for an output or
/// gradient tile; rows and columns outside the plane read as zero and are not written.
struct TileSegment {
  int64_t plane = 0;
  int64_t row = 0, col = 0;  ///< may be negative for input patches (padding)
  int64_t tiles = 0;
};

/// A run of `tiles` tiles (1 to kMaxRunTiles): its segments in order, over planes of
/// plane_h x plane_w (row-major). Transform point xi of the run's tile i is at
/// points[xi * point_stride + i].
struct TileRun {
  int64_t plane_h = 0, plane_w = 0;
  int64_t point_stride = 0;
  /// Write the points with non-temporal (streaming) stores where a whole, aligned vector
  /// allows, fenced before the kernel returns: for a buffer far larger than the cache, whose
  /// lines would otherwise each be read from memory before being overwritten. Gradient only.
  bool stream_points = false;
  int64_t tiles = 0;
  int segments = 0;
  TileSegment segment[kMaxRunTiles];
  /// Appends `count` tiles of one tile row (count <= kMaxRunTiles - tiles).
  void add(int64_t plane, int64_t row, int64_t col, int64_t count) {
    segment[segments++] = TileSegment{plane, row, col, count};
    tiles += count;
  }
};

/// V = B^T d B of the run's alpha x alpha input patches (planes from `base`), into `points`.
using InputTiles = void (*)(int m, const float* base, const TileRun& run, float* points);
/// The part inside the planes of Y = A^T M A of the run's tiles, from `points` into the planes
/// from `base`.
using OutputTiles = void (*)(int m, const float* points, const TileRun& run, float* base);
/// P = A dY A^T of the run's m x m tiles (planes from `base`; backward-filter), into `points`.
using GradientTiles = void (*)(int m, const float* base, const TileRun& run, float* points);

/// U = G w G^T of `count` 3x3 filters, filter i's taps at taps + i * stride (in reverse order
/// when `flip`: the 180-degree rotation backward-data needs), into points[xi * point_stride +
/// i].
using FilterTiles = void (*)(int m, const float* taps, int64_t stride, bool flip, int64_t count,
                             int64_t point_stride, float* points);
/// dw = G^T P G of `count` filters (backward-filter): point xi of filter i at
/// points[xi * point_stride + i], its 9 taps written to dw + 9 i.
using FilterAdjointTiles = void (*)(int m, const float* points, int64_t point_stride, int64_t count,
                                    float* dw);

/// The transforms compiled for one instruction set.
struct TileKernels {
  InputTiles input;
  OutputTiles output;
  GradientTiles gradient;
  FilterTiles filter;
  FilterAdjointTiles filter_adjoint;
};

#define CONVLAB_DECLARE_TILE_KERNELS(isa)                                                    \
  namespace isa {                                                                            \
  void input_tiles(int m, const float* base, const TileRun& run, float* points);             \
  void output_tiles(int m, const float* points, const TileRun& run, float* base);            \
  void gradient_tiles(int m, const float* base, const TileRun& run, float* points);          \
  void filter_tiles(int m, const float* taps, int64_t stride, bool flip, int64_t count,      \
                    int64_t point_stride, float* points);                                    \
  void filter_adjoint_tiles(int m, const float* points, int64_t point_stride, int64_t count, \
                            float* dw);                                                      \
  }
CONVLAB_DECLARE_TILE_KERNELS(generic)
CONVLAB_DECLARE_TILE_KERNELS(avx2)
CONVLAB_DECLARE_TILE_KERNELS(avx512)
#undef CONVLAB_DECLARE_TILE_KERNELS

/// The kernels of `isa` (one this CPU runs: see cpu_isa()).
inline TileKernels tile_kernels(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512:
      return {avx512::input_tiles, avx512::output_tiles, avx512::gradient_tiles,
              avx512::filter_tiles, avx512::filter_adjoint_tiles};
    case CpuIsa::avx2:
      return {avx2::input_tiles, avx2::output_tiles, avx2::gradient_tiles, avx2::filter_tiles,
              avx2::filter_adjoint_tiles};
    case CpuIsa::generic:
      break;
  }
  return {generic::input_tiles, generic::output_tiles, generic::gradient_tiles,
          generic::filter_tiles, generic::filter_adjoint_tiles};
}

}  // namespace convlab::winograd
