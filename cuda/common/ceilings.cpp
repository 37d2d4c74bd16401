#include "ceilings.hpp"

#include <algorithm>
#include <cstdio>

#include "check_libs.hpp"
#include "math_mode.hpp"
#include "settings.hpp"

namespace convlab::cuda {

std::string Ceilings::describe() const {
  char text[200];
  std::snprintf(text, sizeof text, "copy %.1f GB/s (%lld MiB D2D), sgemm %.1f GFLOP/s (%lld^3, %s)",
                copy_gb_per_s, copy_bytes >> 20, sgemm_gflop_per_s, gemm_size,
                math_mode_name().c_str());
  return text;
}

Ceilings measure_ceilings(CudaContext& context, long long copy_bytes, long long gemm_size,
                          int runs) {
  Ceilings c;
  c.copy_bytes = copy_bytes;
  c.gemm_size = gemm_size;
  context.activate();
  auto best_ms = [&](const std::function<void()>& work) {
    work();  // warm-up: module loading, cuBLAS's kernel choice
    context.synchronize();
    double best = 1e30;
    for (int i = 0; i < runs; ++i) best = std::min(best, context.time_ms(work));
    return best;
  };
  {
    DeviceBuffer src(context, static_cast<std::size_t>(copy_bytes));
    DeviceBuffer dst(context, static_cast<std::size_t>(copy_bytes));
    context.fill_bytes(src.data(), 0, src.bytes());
    const double ms = best_ms([&] {
      CONVLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(),
                                         cudaMemcpyDeviceToDevice, context.stream()));
    });
    c.copy_gb_per_s = 2.0 * double(copy_bytes) / (ms * 1e6);
  }
  {
    const std::size_t bytes = static_cast<std::size_t>(gemm_size * gemm_size) * sizeof(float);
    DeviceBuffer a(context, bytes), b(context, bytes), out(context, bytes);
    for (DeviceBuffer* m : {&a, &b}) context.fill_bytes(m->data(), 0, m->bytes());
    // The cuBLAS workspace a plan reserves under default knobs (settings.hpp).
    const GpuSettings defaults = gpu_settings(resolve_knobs("ceilings", gpu_knobs(true), {}));
    DeviceBuffer workspace(context, cublas_workspace_bytes(defaults, context.info().cc_major));
    CONVLAB_CUBLAS_CHECK(cublasSetWorkspace(context.cublas(), workspace.data(), workspace.bytes()));
    const float one = 1.0f, zero = 0.0f;
    const int n = static_cast<int>(gemm_size);
    const double ms = best_ms([&] {
      CONVLAB_CUBLAS_CHECK(cublasSgemm(context.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                                       a.floats(), n, b.floats(), n, &zero, out.floats(), n));
    });
    c.sgemm_gflop_per_s = 2.0 * double(gemm_size) * gemm_size * gemm_size / (ms * 1e6);
  }
  context.synchronize();
  return c;
}

}  // namespace convlab::cuda
