#include "check.hpp"
#include "grid.hpp"
#include "random_fill.hpp"

namespace convlab::cuda {
namespace {

// splitmix64: a counter hash good enough to look random to the hardware and the libraries.
__device__ std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void fill_uniform_kernel(float* data, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    // 24 random bits -> [0, 1) exactly representable, then [-1, 1).
    const float u = float(mix(seed ^ (i * 0xD1B54A32D192ED03ull)) >> 40) * (1.0f / 16777216.0f);
    data[i] = 2.0f * u - 1.0f;
  }
}

}  // namespace

void fill_uniform(float* device_data, std::size_t count, std::uint64_t seed, CUstream_st* stream) {
  if (count == 0) return;
  fill_uniform_kernel<<<grid_for(static_cast<int64_t>(count)), kThreads, 0, stream>>>(device_data,
                                                                                      count, seed);
  CONVLAB_CUDA_CHECK_LAUNCH("fill_uniform_kernel");
}

void fill_uniform_bytes(void* device_data, std::size_t bytes, std::uint64_t seed,
                        CUstream_st* stream) {
  fill_uniform(static_cast<float*>(device_data), bytes / sizeof(float), seed, stream);
}

}  // namespace convlab::cuda
