#pragma once
// The registration functions of every backend. Only registry.cpp calls them; each is defined
// in its backend's folder and compiled in when that backend is configured.

#include "convlab/registry.hpp"

namespace convlab {

void register_reference(Registry& registry);   // cpu_reference/
void register_cpu_im2col(Registry& registry);  // lib/cpu/im2col/
void register_cpu_fft(Registry& registry);     // lib/cpu/fft/      (CONVLAB_HAVE_FFTW)
void register_cpu_onednn(Registry& registry);  // lib/cpu/onednn/   (CONVLAB_HAVE_ONEDNN)
void register_cuda(Registry& registry);        // cuda/             (CONVLAB_HAVE_CUDA)
void register_cudnn(Registry& registry);       // cuda/cudnn/       (CONVLAB_HAVE_CUDNN)

}  // namespace convlab
