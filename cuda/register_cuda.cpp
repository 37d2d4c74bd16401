// Registers the CUDA strategies. They are always registered when built; without a usable
// device each says so through available() and supports() (cuda/common/device.hpp) and plan()
// throws Error{unavailable} with that reason.
#include "lib/src/backends.hpp"

namespace convlab {
namespace cuda {
void register_cuda_im2col(Registry& registry);  // im2col/cuda_im2col.cpp
void register_cuda_fft(Registry& registry);     // fft/cuda_fft.cpp
}  // namespace cuda

void register_cuda(Registry& registry) {
  cuda::register_cuda_im2col(registry);
  cuda::register_cuda_fft(registry);
}

}  // namespace convlab
