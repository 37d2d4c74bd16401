#include "ceilings.hpp"

#include <algorithm>
#include <cstdio>

#include "check_libs.hpp"
#include "math_mode.hpp"
#include "random_fill.hpp"
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
    fill_uniform_bytes(src.data(), src.bytes(), 1, context.stream());
    const double ms = best_ms([&] {
      CONVLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(),
                                         cudaMemcpyDeviceToDevice, context.stream()));
    });
    c.copy_gb_per_s = 2.0 * double(copy_bytes) / (ms * 1e6);
  }
  {
    const std::size_t bytes = static_cast<std::size_t>(gemm_size * gemm_size) * sizeof(float);
    DeviceBuffer a(context, bytes), b(context, bytes), out(context, bytes);
    fill_uniform(a.floats(), a.bytes() / sizeof(float), 2, context.stream());
    fill_uniform(b.floats(), b.bytes() / sizeof(float), 3, context.stream());
    // The cuBLAS workspace a plan reserves under default knobs (settings.hpp). The handle is
    // shared: it must not keep pointing at this buffer once it is freed, so the guard
    // (destroyed first, also when a call throws) waits for the GEMMs and detaches it.
    const GpuSettings defaults = gpu_settings(resolve_knobs("ceilings", gpu_knobs(true), {}));
    DeviceBuffer workspace(context, cublas_workspace_bytes(defaults, context.info().cc_major));
    CONVLAB_CUBLAS_CHECK(cublasSetWorkspace(context.cublas(), workspace.data(), workspace.bytes()));
    struct Detach {
      CudaContext& context;
      ~Detach() {
        cudaStreamSynchronize(context.stream());
        cublasSetWorkspace(context.cublas(), nullptr, 0);
      }
    } detach{context};
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
