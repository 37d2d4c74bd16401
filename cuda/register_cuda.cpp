// The CUDA module's entry point (convlab/plugin.hpp): the registry calls it after loading
// this module, the first time a lookup could name one of its algorithms. The strategies are
// always registered once loaded; without a usable device each says so through available()
// and supports() (cuda/common/device.hpp) and plan() throws Error{unavailable} with that
// reason.
#include "convlab/config.hpp"
#include "convlab/plugin.hpp"

namespace convlab {
namespace cuda {
void register_cuda_im2col(Registry& registry);     // im2col/cuda_im2col.cpp
void register_cuda_fft(Registry& registry);        // fft/cuda_fft.cpp
void register_cuda_fft_tiled(Registry& registry);  // fft_tiled/cuda_fft_tiled.cpp
void register_cuda_winograd(Registry& registry);   // winograd/cuda_winograd.cpp
}  // namespace cuda
void register_cudnn(Registry& registry);  // cudnn/cudnn_algorithm.cpp (with cuDNN)
}  // namespace convlab

extern "C" void convlab_register_plugin(convlab::Registry& registry) {
  convlab::cuda::register_cuda_im2col(registry);
  convlab::cuda::register_cuda_fft(registry);
  convlab::cuda::register_cuda_fft_tiled(registry);
  convlab::cuda::register_cuda_winograd(registry);
#if CONVLAB_HAVE_CUDNN
  convlab::register_cudnn(registry);
#endif
}
