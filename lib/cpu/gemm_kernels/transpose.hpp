#pragma once
// Out-of-place transpose of a row-major float matrix, for GEMM operands that arrive with the
// reduction dimension contiguous (cpu.winograd's backward-filter products sum over tiles, the
// inner dimension of both its operands) while the unpacked GEMM wants B's columns contiguous.
// Compiled once per instruction set (transpose.inc): square blocks of one vector's lanes are
// transposed in registers.

#include <cstdint>

#include "cpu/isa.hpp"

namespace convlab::cpu_gemm {

/// dst[j * ldd + i] = src[i * lds + j] for i < rows, j < cols (the two may not overlap).
/// `isa` must be one this CPU runs.
void transpose(CpuIsa isa, int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
               int64_t ldd);

#define CONVLAB_DECLARE_TRANSPOSE(isa)                                                  \
  namespace isa {                                                                       \
  void transpose(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst, \
                 int64_t ldd);                                                          \
  }
CONVLAB_DECLARE_TRANSPOSE(generic)
CONVLAB_DECLARE_TRANSPOSE(avx2)
CONVLAB_DECLARE_TRANSPOSE(avx512)
#undef CONVLAB_DECLARE_TRANSPOSE

}  // namespace convlab::cpu_gemm
