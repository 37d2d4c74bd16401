#pragma once
// The checked-call macros of cuFFT and cuBLAS (see check.hpp).

#include <cublas_v2.h>
#include <cufft.h>

#include "check.hpp"

#define CONVLAB_CUFFT_CHECK(call)                                                                \
  do {                                                                                           \
    const cufftResult convlab_status_ = (call);                                                  \
    if (convlab_status_ != CUFFT_SUCCESS) {                                                      \
      ::convlab::cuda::fail_cufft(static_cast<int>(convlab_status_), #call, __FILE__, __LINE__); \
    }                                                                                            \
  } while (0)

#define CONVLAB_CUBLAS_CHECK(call)                                                                \
  do {                                                                                            \
    const cublasStatus_t convlab_status_ = (call);                                                \
    if (convlab_status_ != CUBLAS_STATUS_SUCCESS) {                                               \
      ::convlab::cuda::fail_cublas(static_cast<int>(convlab_status_), #call, __FILE__, __LINE__); \
    }                                                                                             \
  } while (0)
