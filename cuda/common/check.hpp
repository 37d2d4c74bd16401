#pragma once
// The checked-call macros of the CUDA runtime. Each turns a failed status into
// convlab::Error carrying the status name, the call as written and where it was made.
// cuFFT's and cuBLAS's are in check_libs.hpp (kept apart so kernel files stay lean), cuDNN's
// in cuda/cudnn/cudnn_check.hpp (compiled only with cuDNN).

#include <cuda_runtime.h>

#include "grid.hpp"
#include "status.hpp"

#define CONVLAB_CUDA_CHECK(call) \
  CONVLAB_CHECK_STATUS_AS(cudaError_t, cudaSuccess, fail_cuda, call, #call)

/// After a kernel launch: launch-configuration errors surface through cudaGetLastError.
/// `kernel` is a string literal naming the kernel for the message.
#define CONVLAB_CUDA_CHECK_LAUNCH(kernel)                                          \
  CONVLAB_CHECK_STATUS_AS(cudaError_t, cudaSuccess, fail_cuda, cudaGetLastError(), \
                          "launch of " kernel)

/// Launches the grid-stride `kernel(...)` over `elements` items on `stream` with the shape of
/// grid.hpp, then checks the launch naming the kernel: the two lines every launcher of a
/// grid-stride kernel would otherwise repeat. For .cu files (the launch syntax is nvcc's).
#define CONVLAB_LAUNCH_GRID_STRIDE(kernel, elements, stream, ...)                          \
  do {                                                                                     \
    kernel<<<::convlab::cuda::grid_for(elements), ::convlab::cuda::kThreads, 0, stream>>>( \
        __VA_ARGS__);                                                                      \
    CONVLAB_CUDA_CHECK_LAUNCH(#kernel);                                                    \
  } while (0)
