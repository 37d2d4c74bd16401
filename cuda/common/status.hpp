#pragma once
// Status names and error codes of the CUDA libraries, behind a CUDA-free interface so that
// host-only tests can check the mapping. The check macros that use them are in check.hpp.

#include <string>

#include "convlab/error.hpp"

namespace convlab::cuda {

/// cudaGetErrorName / cudaGetErrorString of a cudaError_t value.
std::string cuda_error_name(int error);
std::string cuda_error_text(int error);
/// "CUFFT_ALLOC_FAILED" etc.; "CUFFT_STATUS_<n>" for a value this build does not know.
std::string cufft_status_name(int status);
/// cublasGetStatusName of a cublasStatus_t value.
std::string cublas_status_name(int status);

/// The convlab error code a failed status becomes: allocation failures are out_of_memory,
/// a missing or unusable device is unavailable, a valid request the library cannot do is
/// unsupported, everything else is backend.
ErrorCode cuda_error_code(int error);
ErrorCode cufft_error_code(int status);
ErrorCode cublas_error_code(int status);
/// cuDNN 9 statuses are grouped by thousands (2xxx bad parameter, 3xxx not supported, 4xxx
/// internal error, 5xxx execution failed).
ErrorCode cudnn_error_code(int status);

/// The message of a failed call: "<call> failed: <STATUS_NAME> (<text>) at <file>:<line>".
std::string failure_message(const std::string& status_name, const std::string& text,
                            const char* call, const char* file, int line);

/// Throw the Error of a failed call (used by the check macros).
[[noreturn]] void fail_cuda(int error, const char* call, const char* file, int line);
[[noreturn]] void fail_cufft(int status, const char* call, const char* file, int line);
[[noreturn]] void fail_cublas(int status, const char* call, const char* file, int line);

}  // namespace convlab::cuda

/// The one shape of every checked-call macro (check.hpp, check_libs.hpp, cudnn_check.hpp):
/// evaluates `call` once and, unless it returned `success`, throws through
/// ::convlab::cuda::`fail` with the status, `text` (the call as written) and where it was made.
#define CONVLAB_CHECK_STATUS_AS(status_type, success, fail, call, text)                   \
  do {                                                                                    \
    const status_type convlab_status_ = (call);                                           \
    if (convlab_status_ != (success)) {                                                   \
      ::convlab::cuda::fail(static_cast<int>(convlab_status_), text, __FILE__, __LINE__); \
    }                                                                                     \
  } while (0)
