// The fused crop's cuFFT store callback (fft_options.hpp), compiled apart from the library:
// to LTO-IR (nvcc -dlto, cuda/CMakeLists.txt), embedded as bytes (fft_crop_callback.hpp), and
// handed to cufftXtSetJITCallback when the C2R plan of a crop=fused plan is made, so that
// cuFFT links it into its own kernel at plan time (nvJitLink, loaded by cuFFT at run time).
// The body is fft_crop_store_at, which the host tests run in place of this callback.
#include <cufftXt.h>

#include <type_traits>

#include "fft_kernels.hpp"

extern "C" __device__ void convlab_fft_crop_store(void* data_out, unsigned long long offset,
                                                  cufftReal element, void* /*caller_info*/,
                                                  void* /*shared*/) {
  convlab::cuda::fft_crop_store_at(data_out, offset, element);
}

// The type cuFFT calls a real store callback through.
static_assert(std::is_same_v<decltype(&convlab_fft_crop_store), cufftJITCallbackStoreR>,
              "not the signature of a CUFFT_CB_ST_REAL callback");
