#pragma once
// The orchestration of cuda.im2col's passes (which kernel, which GEMM, which pointers and
// strides, in which order; the derivation is at the top of cuda_im2col.cpp) written against
// an abstract set of operations. The plan runs it with cuBLAS and the kernels; host tests
// run the very same code with plain loops that follow cuBLAS's column-major semantics, so
// every pointer, stride and leading dimension is checked against the reference without a
// GPU. CUDA-free.

#include <cstdint>

#include "convlab/algorithm.hpp"
#include "cuda_im2col.hpp"
#include "strategy/im2col_index.hpp"

namespace convlab::cuda {

/// What a pass needs done. `gemm` is cublasSgemmStridedBatched_64's contract: column-major,
/// ops 'N' or 'T', alpha = 1, C_i = op(A_i) op(B_i) + beta C_i for i < batch with
/// X_i = X + i * stride_x; beta = 0 does not read C.
class Im2colOps {
 public:
  virtual ~Im2colOps() = default;
  virtual void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, const float* a,
                    int64_t lda, int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b,
                    float beta, float* c, int64_t ldc, int64_t stride_c, int64_t batch) = 0;
  virtual void im2col(const Im2colGeometry& g, const float* x_group, float* col) = 0;
  virtual void col2im(const Im2colGeometry& g, const float* col, float* dx_group) = 0;
  virtual void stage(const float* src, int64_t src_image_stride, int64_t images, int64_t rows,
                     int64_t cols, float* dst) = 0;
};

/// Runs `pass` of `p` with the buffers of `layout` (col and stage inside the workspace, or
/// null where the layout has none).
void run_im2col_pass(const ConvProblem& p, Pass pass, const CudaIm2colLayout& layout,
                     const Tensors& t, float* col, float* stage, Im2colOps& ops);

}  // namespace convlab::cuda
