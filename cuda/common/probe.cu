// The probe kernel: its presence in the fat binary for the current device tells whether
// this build's kernels can run there (sm_80 code runs on sm_8x, compute_90 PTX JITs to
// sm_90 and later; anything older has no image).
#include <cuda_runtime.h>

namespace convlab::cuda {

int probe_kernel_image();  // declared in device.hpp; not included to keep nvcc's work small

namespace {
__global__ void probe_kernel() {}
}  // namespace

int probe_kernel_image() {
  cudaFuncAttributes attributes;
  return static_cast<int>(cudaFuncGetAttributes(&attributes, probe_kernel));
}

}  // namespace convlab::cuda
