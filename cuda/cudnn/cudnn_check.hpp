#pragma once
// cuDNN's checked-call macro and the per-device cuDNN handle. Compiled only with cuDNN.

#include <cudnn.h>

#include "cuda/common/device.hpp"
#include "cuda/common/status.hpp"

namespace convlab::cuda {

/// Throws the Error of a failed cuDNN call: the status name (cudnnGetErrorString), cuDNN's
/// last error text when it has one, the call and where it was made.
[[noreturn]] void fail_cudnn(int status, const char* call, const char* file, int line);

/// The cuDNN handle of a device, bound to its context's stream; made on first use, kept
/// until exit (as the contexts are).
cudnnHandle_t cudnn_handle(CudaContext& context);

}  // namespace convlab::cuda

#define CONVLAB_CUDNN_CHECK(call) \
  CONVLAB_CHECK_STATUS_AS(cudnnStatus_t, CUDNN_STATUS_SUCCESS, fail_cudnn, call, #call)
