#include "settings.hpp"

#include <string>
#include <utility>

namespace convlab::cuda {

std::vector<KnobSpec> gpu_knobs(bool uses_cublas, std::vector<KnobSpec> own) {
  std::vector<KnobSpec> knobs = {
      integer_knob("device", "0", 0, 1 << 20, /*allow_auto=*/false, "CONVLAB_CUDA_DEVICE",
                   "the CUDA device index, among those CUDA_VISIBLE_DEVICES leaves visible"),
      boolean_knob("allow_tf32", false, "CONVLAB_ALLOW_TF32",
                   "let cuBLAS/cuDNN use TF32 tensor cores (10-bit products); off: fp32"),
  };
  if (uses_cublas) {
    knobs.push_back(bytes_knob("cublas_workspace", "auto", /*allow_auto=*/true,
                               "CONVLAB_CUBLAS_WORKSPACE",
                               "cuBLAS workspace inside the plan's workspace; auto: cuBLAS's "
                               "default pool for the architecture"));
  }
  for (KnobSpec& spec : own) knobs.push_back(std::move(spec));
  return knobs;
}

GpuSettings gpu_settings(const KnobValues& knobs) {
  GpuSettings s;
  s.device = static_cast<int>(knob_integer(knobs, "device").value_or(0));
  s.allow_tf32 = knob_boolean(knobs, "allow_tf32");
  if (knobs.count("cublas_workspace")) s.cublas_workspace = knob_bytes(knobs, "cublas_workspace");
  return s;
}

KnobValues default_knobs(const AlgorithmInfo& info) {
  return resolve_knobs(info.name, info.knobs, {});
}

int device_of(const AlgorithmInfo& info, const KnobValues& given) {
  return gpu_settings(resolve_knobs(info.name, info.knobs, given)).device;
}

std::size_t cublas_workspace_bytes(const GpuSettings& settings, int cc_major) {
  if (settings.cublas_workspace) return *settings.cublas_workspace;
  return (cc_major >= 9 ? 32 : 4) * (std::size_t(1) << 20);
}

}  // namespace convlab::cuda
