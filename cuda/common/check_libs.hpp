#pragma once
// The checked-call macros of cuFFT and cuBLAS (see check.hpp).

#include <cublas_v2.h>
#include <cufft.h>

#include "check.hpp"

#define CONVLAB_CUFFT_CHECK(call) \
  CONVLAB_CHECK_STATUS_AS(cufftResult, CUFFT_SUCCESS, fail_cufft, call, #call)

#define CONVLAB_CUBLAS_CHECK(call) \
  CONVLAB_CHECK_STATUS_AS(cublasStatus_t, CUBLAS_STATUS_SUCCESS, fail_cublas, call, #call)
