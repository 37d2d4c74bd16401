#pragma once
// A single-precision GEMM that multiplies its operands where they lie: no packing. The
// register tile is MR rows of C by NV SIMD vectors of columns (6 x 64 with AVX-512, 6 x 16
// with AVX2, 6 x 8 with SSE2); each step of the inner loop broadcasts one element from each
// of the MR rows of A and loads NV vectors of one row of B.
//
// It suits products where a library GEMM's packing is a large share of the work: cpu.winograd's
// per-transform-point products read each element of A (the transformed filters, up to 1 MiB
// per point) once per chunk of tiles, and a BLAS sgemm copies that A into its panel format on
// every call, so the copy costs as much memory traffic as the product itself. Here A streams
// once from memory in MR row streams and B (one chunk's transformed input, the columns
// contiguous) stays in cache across the row tiles. Compiled once per instruction set
// (unpacked_sgemm.inc); the caller chooses the build with its `isa` knob.

#include <cstdint>

#include "cpu/isa.hpp"

namespace convlab::cpu_gemm {

/// Rows of C per register tile in every build (UG_MR): a product whose rows are a multiple of
/// it runs no narrower edge tile.
inline constexpr int64_t kUnpackedSgemmRows = 6;

/// Rows of B per block of the inner dimension: C accumulates one block of A's columns and B's
/// rows at a time (a caller that lays out B in blocks uses the same depth).
inline constexpr int64_t kUnpackedSgemmDepth = 256;

/// Which of B's columns each of its rows holds (the b_lanes of unpacked_sgemm): one bit per
/// column, 16 to a word; row l's words start at words + row[l].
struct BLanes {
  const uint16_t* words = nullptr;
  const int64_t* row = nullptr;  ///< k entries
  /// Floats the product may read whether or not their lanes are set (empty: none). Builds
  /// without native masked loads (AVX2's cost more than plain ones) read a vector inside this
  /// span plainly and clear its lanes after; the products are the same.
  const float* readable_begin = nullptr;
  const float* readable_end = nullptr;
};

/// Row-major C[m, n] = op(A)[m, k] B[k, n] + beta C, op(A) = A stored [m, k], or its
/// transpose when A is stored [k, m] (trans_a); lda, ldb, ldc are the row strides as stored.
/// beta = 0 does not read C (a NaN in it does not survive, as with BLAS). Reads exactly the
/// elements of A and B the product uses, so the operands may end at their last element.
/// `isa` must be one this CPU runs (cpu_isa()).
///
/// With `a_index`, op(A) is a selection of A's stored columns, never copied: A stored [m, *]
/// gives op(A)[i, l] = a[i*lda + a_index[l]] (k entries), A stored [*, m] (trans_a) gives
/// op(A)[i, l] = a[l*lda + a_index[i]] (m entries). cpu.im2col's tap classes multiply only
/// the filter columns of the taps that read inside the image this way
/// (strategy/im2col_tap_classes.hpp). Where the index of A stored [m, *] jumps more than a
/// cache line between some of its entries, the product fetches the rows' floats at each jump
/// ahead of the steps that read them (the same sums).
///
/// With `b_index` (k entries), B's row l is the n floats at b + b_index[l], and ldb is not
/// read: rows may overlap. cpu.im2col's implicit column buffer reads the taps of a padded
/// image so (strategy/im2col_padded_grid.hpp), where each of the buffer's rows is a run of it.
///
/// With `b_lanes` as well, B's row l holds only some of its columns: column j is
/// b[b_index[l] + j] where bit j % 16 of b_lanes->words[b_lanes->row[l] + j / 16] is set, and
/// zero where it is clear, where the product reads nothing (the address may lie outside any
/// allocation) unless it lies in the readable span. cpu.im2col's masked columns read the taps of
/// the unpadded image so, the bits clearing the taps that fall in its padding
/// (strategy/im2col_masked_columns.hpp).
///
/// With `stream_a`, A stored [m, k] without an index is read from memory rather than cache
/// (cpu.winograd's transformed filter of one point, read once per chunk of tiles): the
/// product fetches each row's floats a few lines ahead of the steps that read them. The same
/// sums.
void unpacked_sgemm(CpuIsa isa, bool trans_a, int64_t m, int64_t n, int64_t k, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                    const int64_t* a_index = nullptr, const int64_t* b_index = nullptr,
                    const BLanes* b_lanes = nullptr, bool stream_a = false);

/// Whether the build for `isa` reads a masked B's vectors by native masked loads, as cheap as
/// plain ones (AVX-512's k-masks). The others read the vectors in the readable span plainly
/// and clear their lanes, which costs an operation per vector and, in AVX2's 16 vector
/// registers, the masks' room: cpu.im2col takes its masked columns by default only where this
/// holds.
bool unpacked_sgemm_native_lane_loads(CpuIsa isa);

#define CONVLAB_DECLARE_UNPACKED_SGEMM(isa)                                                       \
  namespace isa {                                                                                 \
  void unpacked_sgemm(bool trans_a, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, \
                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc,             \
                      const int64_t* a_index, const int64_t* b_index, const BLanes* b_lanes,      \
                      bool stream_a);                                                             \
  bool native_lane_loads();                                                                       \
  }
CONVLAB_DECLARE_UNPACKED_SGEMM(generic)
CONVLAB_DECLARE_UNPACKED_SGEMM(avx2)
CONVLAB_DECLARE_UNPACKED_SGEMM(avx512)
#undef CONVLAB_DECLARE_UNPACKED_SGEMM

}  // namespace convlab::cpu_gemm
