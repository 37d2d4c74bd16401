#pragma once
// The environment settings of the GPU algorithms, parsed strictly (a malformed value is an
// Error naming it, never silently the default). Each is read once per process and shown in
// the plans' notes, so that no limit is hidden:
//   CONVLAB_ALLOW_TF32=0|1              math_mode.hpp
//   CONVLAB_CUDA_DEVICE=<index>         device.hpp
//   CONVLAB_CUBLAS_WORKSPACE=<bytes>    cuBLAS workspace inside each cuBLAS plan's workspace
//   CONVLAB_CUDA_IM2COL_IMAGES=<n>|auto images per column buffer of cuda.im2col
//   CONVLAB_CUDNN_FIND_WORKSPACE=<bytes> trial workspace budget of cudnn.find

#include <cstddef>
#include <cstdint>

namespace convlab::cuda {

/// Parses a byte count: digits, optionally followed by K/KiB, M/MiB or G/GiB (binary).
/// Unset or "" gives `fallback`. Throws Error{invalid_argument} naming `variable` and the
/// value otherwise (also when it does not fit 64 bits).
std::size_t parse_bytes(const char* value, const char* variable, std::size_t fallback);
/// Parses a positive count or "auto" (returned as 0); unset or "" is "auto".
int64_t parse_count_or_auto(const char* value, const char* variable);

/// The cuBLAS workspace a plan reserves: CONVLAB_CUBLAS_WORKSPACE, else cuBLAS's own default
/// pool size for the architecture (32 MiB on sm_90 and later, 4 MiB before; cuBLAS docs,
/// cublasSetWorkspace).
std::size_t cublas_workspace_bytes(int cc_major);
/// CONVLAB_CUDA_IM2COL_IMAGES; 0 = automatic.
int64_t im2col_images_setting();
/// CONVLAB_CUDNN_FIND_WORKSPACE; default 1 GiB.
std::size_t find_budget();

}  // namespace convlab::cuda
