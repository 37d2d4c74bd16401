#include "status.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

namespace convlab::cuda {

std::string cuda_error_name(int error) { return cudaGetErrorName(static_cast<cudaError_t>(error)); }

std::string cuda_error_text(int error) {
  return cudaGetErrorString(static_cast<cudaError_t>(error));
}

std::string cufft_status_name(int status) {
  // cuFFT has no name function; the names are the enumerators of cufftResult in cufft.h.
  switch (static_cast<cufftResult>(status)) {
#define CONVLAB_NAME(x) \
  case x:               \
    return #x;
    CONVLAB_NAME(CUFFT_SUCCESS)
    CONVLAB_NAME(CUFFT_INVALID_PLAN)
    CONVLAB_NAME(CUFFT_ALLOC_FAILED)
    CONVLAB_NAME(CUFFT_INVALID_TYPE)
    CONVLAB_NAME(CUFFT_INVALID_VALUE)
    CONVLAB_NAME(CUFFT_INTERNAL_ERROR)
    CONVLAB_NAME(CUFFT_EXEC_FAILED)
    CONVLAB_NAME(CUFFT_SETUP_FAILED)
    CONVLAB_NAME(CUFFT_INVALID_SIZE)
    CONVLAB_NAME(CUFFT_UNALIGNED_DATA)
    CONVLAB_NAME(CUFFT_INVALID_DEVICE)
    CONVLAB_NAME(CUFFT_NO_WORKSPACE)
    CONVLAB_NAME(CUFFT_NOT_IMPLEMENTED)
    CONVLAB_NAME(CUFFT_NOT_SUPPORTED)
#undef CONVLAB_NAME
    default:
      return "CUFFT_STATUS_" + std::to_string(status);
  }
}

std::string cublas_status_name(int status) {
  return cublasGetStatusName(static_cast<cublasStatus_t>(status));
}

ErrorCode cuda_error_code(int error) {
  switch (static_cast<cudaError_t>(error)) {
    case cudaErrorMemoryAllocation:
      return ErrorCode::out_of_memory;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorCompatNotSupportedOnDevice:
      return ErrorCode::unavailable;
    default:
      return ErrorCode::backend;
  }
}

ErrorCode cufft_error_code(int status) {
  switch (static_cast<cufftResult>(status)) {
    case CUFFT_ALLOC_FAILED:
      return ErrorCode::out_of_memory;
    case CUFFT_INVALID_SIZE:
    case CUFFT_NOT_IMPLEMENTED:
    case CUFFT_NOT_SUPPORTED:
      return ErrorCode::unsupported;
    case CUFFT_INVALID_DEVICE:
      return ErrorCode::unavailable;
    default:
      return ErrorCode::backend;
  }
}

ErrorCode cublas_error_code(int status) {
  switch (static_cast<cublasStatus_t>(status)) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return ErrorCode::out_of_memory;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return ErrorCode::unsupported;
    default:
      return ErrorCode::backend;
  }
}

ErrorCode cudnn_error_code(int status) {
  // The values are cuDNN 9's (cudnn_graph.h); they are spelled out here so that this
  // mapping compiles, and is tested, without cuDNN.
  constexpr int kHostAllocationFailed = 4003, kDeviceAllocationFailed = 4004;
  if (status == kHostAllocationFailed || status == kDeviceAllocationFailed) {
    return ErrorCode::out_of_memory;
  }
  if (status >= 3000 && status < 4000) return ErrorCode::unsupported;
  return ErrorCode::backend;
}

std::string failure_message(const std::string& status_name, const std::string& text,
                            const char* call, const char* file, int line) {
  std::string message = std::string(call) + " failed: " + status_name;
  if (!text.empty() && text != status_name) message += " (" + text + ")";
  return message + " at " + file + ":" + std::to_string(line);
}

void fail_cuda(int error, const char* call, const char* file, int line) {
  // Clear a non-sticky error so that the next call does not report it again.
  (void)cudaGetLastError();
  throw Error(cuda_error_code(error),
              failure_message(cuda_error_name(error), cuda_error_text(error), call, file, line));
}

void fail_cufft(int status, const char* call, const char* file, int line) {
  throw Error(cufft_error_code(status),
              failure_message(cufft_status_name(status), "", call, file, line));
}

void fail_cublas(int status, const char* call, const char* file, int line) {
  throw Error(cublas_error_code(status),
              failure_message(cublas_status_name(status),
                              cublasGetStatusString(static_cast<cublasStatus_t>(status)), call,
                              file, line));
}

}  // namespace convlab::cuda
