#pragma once
// cpu.winograd's tile transforms on runs of consecutive tiles along one tile row of one
// channel plane, compiled once per instruction set (tile_kernels.inc) and chosen at run time
// (cpu/isa.hpp). A run's tiles are the SIMD lanes: tile i of the run is lane i % L of vector
// i / L (L = cpu_isa_vector_floats(isa)), so the transform points of consecutive tiles are
// stored contiguously, the layout the per-point GEMMs read.

#include <cstdint>

#include "cpu/isa.hpp"

namespace convlab::winograd {

/// The most tiles one kernel call takes (a multiple of every ISA's vector).
inline constexpr int64_t kMaxRunTiles = 64;

/// A run of `tiles` tiles along one tile row of a channel plane (plane_h x plane_w, row-major):
/// tile i covers plane rows [row, row + extent) and columns [col + i m, col + i m + extent),
/// extent = alpha for an input patch, m for an output or gradient tile; rows and columns
/// outside the plane read as zero and are not written. Transform point xi of tile i is at
/// points[xi * point_stride + i].
struct TileRun {
  int64_t plane_h = 0, plane_w = 0;
  int64_t row = 0, col = 0;  ///< may be negative for input patches (padding)
  int64_t tiles = 0;         ///< 1 to kMaxRunTiles
  int64_t point_stride = 0;
};

/// V = B^T d B of the run's alpha x alpha input patches of `plane`, into `points`.
using InputTiles = void (*)(int m, const float* plane, const TileRun& run, float* points);
/// The part inside the plane of Y = A^T M A of the run's tiles, from `points` into `plane`.
using OutputTiles = void (*)(int m, const float* points, const TileRun& run, float* plane);
/// P = A dY A^T of the run's m x m tiles of `plane` (backward-filter), into `points`.
using GradientTiles = void (*)(int m, const float* plane, const TileRun& run, float* points);

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
  void input_tiles(int m, const float* plane, const TileRun& run, float* points);            \
  void output_tiles(int m, const float* points, const TileRun& run, float* plane);           \
  void gradient_tiles(int m, const float* plane, const TileRun& run, float* points);         \
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
