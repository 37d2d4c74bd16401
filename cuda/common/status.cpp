#include "status.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>

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
    CONVLAB_NAME(CUFFT_MISSING_DEPENDENCY)
    CONVLAB_NAME(CUFFT_NVRTC_FAILURE)
    CONVLAB_NAME(CUFFT_NVJITLINK_FAILURE)
    CONVLAB_NAME(CUFFT_NVSHMEM_FAILURE)
#undef CONVLAB_NAME
    default:
      return "CUFFT_STATUS_" + std::to_string(status);
  }
}

std::string cublas_status_name(int status) {
  return cublasGetStatusName(static_cast<cublasStatus_t>(status));
}

namespace {

// A library's statuses that mean something other than a backend failure; every status not
// listed is ErrorCode::backend.
struct StatusCode {
  int status;
  ErrorCode code;
};

template <std::size_t N>
ErrorCode code_of(const StatusCode (&table)[N], int status) {
  for (const StatusCode& entry : table) {
    if (entry.status == status) return entry.code;
  }
  return ErrorCode::backend;
}

constexpr StatusCode kCudaCodes[] = {
    {cudaErrorMemoryAllocation, ErrorCode::out_of_memory},
    {cudaErrorNoDevice, ErrorCode::unavailable},
    {cudaErrorInsufficientDriver, ErrorCode::unavailable},
    {cudaErrorInvalidDevice, ErrorCode::unavailable},
    {cudaErrorDevicesUnavailable, ErrorCode::unavailable},
    {cudaErrorNoKernelImageForDevice, ErrorCode::unavailable},
    {cudaErrorCompatNotSupportedOnDevice, ErrorCode::unavailable},
};

constexpr StatusCode kCufftCodes[] = {
    {CUFFT_ALLOC_FAILED, ErrorCode::out_of_memory},
    {CUFFT_INVALID_SIZE, ErrorCode::unsupported},
    {CUFFT_NOT_IMPLEMENTED, ErrorCode::unsupported},
    {CUFFT_NOT_SUPPORTED, ErrorCode::unsupported},
    // A library cuFFT loads for a feature (nvJitLink for LTO callbacks) is not installed.
    {CUFFT_MISSING_DEPENDENCY, ErrorCode::unsupported},
    {CUFFT_INVALID_DEVICE, ErrorCode::unavailable},
};

constexpr StatusCode kCublasCodes[] = {
    {CUBLAS_STATUS_ALLOC_FAILED, ErrorCode::out_of_memory},
    {CUBLAS_STATUS_NOT_SUPPORTED, ErrorCode::unsupported},
    {CUBLAS_STATUS_ARCH_MISMATCH, ErrorCode::unsupported},
};

}  // namespace

ErrorCode cuda_error_code(int error) { return code_of(kCudaCodes, error); }

ErrorCode cufft_error_code(int status) { return code_of(kCufftCodes, status); }

ErrorCode cublas_error_code(int status) { return code_of(kCublasCodes, status); }

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
