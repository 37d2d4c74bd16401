#pragma once
// Copies and sums of short rows at arbitrary strides, compiled once per instruction set
// (strided_rows.inc): cpu.im2col's tap classes move a class's pixels of each plane row by row,
// rows a few floats wide (11 in a 13x13 image's interior, 1 at its edges), where a copy
// through a row-sized local array ran three times slower than one masked vector load and
// store, and that one slower than two overlapping moves of plain blocks of floats.

#include <cstdint>

#include "cpu/isa.hpp"

namespace convlab::cpu_gemm {

/// Blocks of rows that one copy_rows call repeats over: block (u, v), u < outer, v < inner,
/// runs from src + u * src_outer + v * src_inner to dst + u * dst_outer + v * dst_inner (a
/// class's rows of every channel and image in one call, where a call per image and channel
/// cost more than the copy of its five rows of five floats).
struct RowBlocks {
  int64_t outer = 1, src_outer = 0, dst_outer = 0;
  int64_t inner = 1, src_inner = 0, dst_inner = 0;
};

/// dst[r * dst_stride + p] = src[r * src_stride + p] for r < rows, p < width, in every block
/// of `blocks` (one by default). Touches no element of either outside those. `isa` must be
/// one this CPU runs.
void copy_rows(CpuIsa isa, const float* src, int64_t src_stride, int64_t rows, int64_t width,
               float* dst, int64_t dst_stride, const RowBlocks& blocks = {});

/// dst[r * dst_stride + p] += src[r * src_stride + p], likewise.
void add_rows(CpuIsa isa, const float* src, int64_t src_stride, int64_t rows, int64_t width,
              float* dst, int64_t dst_stride);

#define CONVLAB_DECLARE_STRIDED_ROWS(isa)                                                    \
  namespace isa {                                                                            \
  void copy_rows(const float* src, int64_t src_stride, int64_t rows, int64_t width, float* dst, \
                 int64_t dst_stride, const RowBlocks& blocks);                               \
  void add_rows(const float* src, int64_t src_stride, int64_t rows, int64_t width, float* dst,  \
                int64_t dst_stride);                                                         \
  }
CONVLAB_DECLARE_STRIDED_ROWS(generic)
CONVLAB_DECLARE_STRIDED_ROWS(avx2)
CONVLAB_DECLARE_STRIDED_ROWS(avx512)
#undef CONVLAB_DECLARE_STRIDED_ROWS

}  // namespace convlab::cpu_gemm
