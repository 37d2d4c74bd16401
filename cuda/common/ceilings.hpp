#pragma once
// The two ceilings of a device that bound every convolution on it: the device-to-device copy
// bandwidth and the fp32 SGEMM rate (cuBLAS in this process' math mode). Measured on random
// data (zeros draw less power and can run faster) with events on the context's stream, best
// of several runs after a warm-up; the GPU check prints them next to its sweep, and a layer's
// floor is max(flops / SGEMM rate, tensor bytes / bandwidth). CUDA-free header.

#include <string>

#include "device.hpp"

namespace convlab::cuda {

struct Ceilings {
  double copy_gb_per_s = 0;      ///< (bytes read + bytes written) / time, 10^9 bytes per second
  double sgemm_gflop_per_s = 0;  ///< 2*m*n*k / time of a square SGEMM
  long long copy_bytes = 0;      ///< size of the copied buffer
  long long gemm_size = 0;       ///< m = n = k
  std::string describe()
      const;  ///< "copy 4123.4 GB/s (1 GiB D2D), sgemm 51234.5 GFLOP/s (8192^3, fp32)"
};

/// Measures both on `context`'s device; allocates through the context (3 GEMM operands of
/// gemm_size^2 floats, two copy buffers of copy_bytes) and frees before returning.
Ceilings measure_ceilings(CudaContext& context, long long copy_bytes = 1ll << 30,
                          long long gemm_size = 8192, int runs = 5);

}  // namespace convlab::cuda
