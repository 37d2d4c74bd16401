#include "run_stream.hpp"

#include "check_libs.hpp"

namespace convlab::cuda {

CublasRunBinding::CublasRunBinding(const CudaContext& context, CUstream_st* stream, void* workspace,
                                   std::size_t bytes, bool tf32)
    : context_(context) {
  CONVLAB_CUBLAS_CHECK(cublasSetStream(context.cublas(), stream));
  try {
    CONVLAB_CUBLAS_CHECK(cublasSetWorkspace(context.cublas(), bytes ? workspace : nullptr, bytes));
    CONVLAB_CUBLAS_CHECK(cublasSetMathMode(
        context.cublas(), tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  } catch (...) {
    cublasSetStream(context.cublas(), context.stream());
    throw;
  }
}

CublasRunBinding::~CublasRunBinding() {
  // Only fails for an invalid handle, which the constructor's calls would have reported.
  (void)cublasSetStream(context_.cublas(), context_.stream());
}

}  // namespace convlab::cuda
