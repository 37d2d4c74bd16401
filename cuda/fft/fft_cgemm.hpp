#pragma once
// The per-bin matrix product of fft_geometry.hpp (FftGemm) as one cuBLAS column-major
// strided-batched CGEMM per group, batched over the bins. CUDA-free, so host tests check the
// mapping against FftGemm's definition.
//
// FftGemm says out(g, i, j) = sum_l opA(A(g, i, l)) * opB(B(g, l, j)), element (g, i, j) of a
// tensor at spectrum plane g*group + i*row + j*col; in the frequency-major layout the planes
// of one bin are contiguous, so each operand of one bin and group is a strided matrix. cuBLAS
// needs each operand column-major (unit stride down a column) and can transpose or
// conjugate-transpose, not conjugate alone. When out has unit stride along j, cuBLAS computes
// out^T = opB(B)^T opA(A)^T instead of out = opA(A) opB(B). Each operand is then read as
// stored (op N) where its unit stride runs down the needed rows and it is not conjugated,
// else as the transpose of the other storage (op T, or op C when conjugated). A product that
// would need a conjugate without a transpose is refused (fft_geometry never asks for one).

#include <cstdint>

#include "strategy/fft_geometry.hpp"

namespace convlab::cuda {

/// One cuBLAS operand: which tensor's spectra, its op ('N', 'T' or 'C'), the offset of
/// group g's matrix within one bin's planes (g * per_group), and its leading dimension.
struct CgemmOperand {
  FftTensor tensor = FftTensor::x;
  char op = 'N';
  int64_t per_group = 0, ld = 1;
  int64_t stride = 0;  ///< complex elements from one bin to the next (the tensor's planes)
};

/// cublasCgemmStridedBatched(op_a, op_b, m, n, k, A, lda, strideA, B, ldb, strideB, C, ...)
/// with batch = bins, once per group.
struct CgemmCall {
  int64_t m = 0, n = 0, k = 0;
  CgemmOperand a, b, c;  ///< c.op is always 'N'
  int64_t groups = 1;
};

/// The call of the pass in `g` (frequency-major layout). Throws Error{invalid_argument} for
/// another layout or a product cuBLAS cannot express.
CgemmCall fft_cgemm_call(const FftGeometry& g);

}  // namespace convlab::cuda
