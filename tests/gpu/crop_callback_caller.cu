// A kernel that calls the fused crop's store callback through cuFFT's type for it, compiled
// to PTX by the build (tests/gpu/gpu.cmake) for test_cuda_fft_callback: linked with the
// embedded callback, the reference must resolve to a definition of this signature.
#include <cufftXt.h>

extern "C" __device__ void convlab_fft_crop_store(void* data_out, unsigned long long offset,
                                                  cufftReal element, void* caller_info,
                                                  void* shared);

extern "C" __global__ void call_crop_store(float* data_out) {
  const cufftJITCallbackStoreR store = convlab_fft_crop_store;
  store(data_out, threadIdx.x, 1.0f, nullptr, nullptr);
}
