#pragma once
// The knobs the GPU algorithms share and the settings a plan derives from them. Each knob may
// take its default from a documented environment variable (read through
// convlab::environment_default, so the run records it); a plan's PlanInfo.knobs says what
// it used.
//   device            integer >= 0        CONVLAB_CUDA_DEVICE   the GPU, among those
//                                                                CUDA_VISIBLE_DEVICES leaves
//   allow_tf32        boolean (false)     CONVLAB_ALLOW_TF32    TF32 tensor cores (math_mode.hpp)
//   cublas_workspace  bytes or auto       CONVLAB_CUBLAS_WORKSPACE  cuBLAS's workspace inside
//                                                                the plan's workspace
// and per algorithm: cuda.im2col.images (CONVLAB_CUDA_IM2COL_IMAGES), cudnn.find.workspace
// (CONVLAB_CUDNN_FIND_WORKSPACE).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/knobs.hpp"

namespace convlab::cuda {

/// device and allow_tf32, plus cublas_workspace when the algorithm calls cuBLAS, then the
/// algorithm's `own` knobs.
std::vector<KnobSpec> gpu_knobs(bool uses_cublas, std::vector<KnobSpec> own = {});

/// The shared settings of one plan, read from resolved knobs.
struct GpuSettings {
  int device = 0;
  bool allow_tf32 = false;
  std::optional<std::size_t> cublas_workspace;  ///< nullopt: auto (or no cuBLAS)
  MathMode math_mode() const { return allow_tf32 ? MathMode::tf32 : MathMode::fp32; }
};
GpuSettings gpu_settings(const KnobValues& knobs);

/// The knobs of `info` with nothing given: defaults, or their environment variables.
KnobValues default_knobs(const AlgorithmInfo& info);
/// The device a plan of `info` made with `given` knobs runs on (validates them).
int device_of(const AlgorithmInfo& info, const KnobValues& given);

/// The cuBLAS workspace a plan reserves: the knob's bytes, else cuBLAS's own default pool
/// size for the architecture (32 MiB on sm_90 and later, 4 MiB before; cuBLAS docs,
/// cublasSetWorkspace).
std::size_t cublas_workspace_bytes(const GpuSettings& settings, int cc_major);

}  // namespace convlab::cuda
