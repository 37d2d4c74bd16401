// cuda.fft_tiled: the GPU twin of cpu.fft_tiled. The tiling (tiles, patches, the sub-problem,
// the workspace, the default tile and batch, the error bound) is strategy/
// tiled_fft_geometry.hpp's, shared with the CPU, where it is tested; the derivation is in
// lib/cpu/fft_tiled/cpu_fft_tiled.cpp. Per batch of (image, tile) pairs the kernels of
// tiled_kernels.cu gather the patches and tiles, cuda.fft's own plan (cuFFT + batched CGEMM)
// runs the unpadded sub-problem, and the kernels copy the tiles out (forward), add the
// patches into dx as a gather (backward-data: no atomics, deterministic) or add the batch's
// dw (backward-filter), all on the run's stream (the caller's, run_stream.hpp), in the order
// of strategy/tiled_fft_passes.hpp; nothing allocates or synchronises in a run.
//
// Workspace: the tiling's buffers, then cuda.fft's workspace for the full batch's sub-problem
// (the shorter last batch, when there is one, has its own plan, which needs no more).
//
// Not run on a GPU in the session that wrote it (none was lent): compiled everywhere nvcc is,
// its sequence and per-element math run on the host in test_cuda_fft_tiled_host, and the GPU
// corpus (test_gpu_algorithms) covers it where a device is present.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/cuda_strategy.hpp"
#include "cuda/common/device.hpp"
#include "cuda/common/math_mode.hpp"
#include "cuda/common/run_stream.hpp"
#include "cuda/common/settings.hpp"
#include "cuda/fft/cuda_fft_plan.hpp"
#include "strategy/tiled_fft_host.hpp"
#include "strategy/tiled_fft_passes.hpp"
#include "tiled_kernels.hpp"

namespace convlab::cuda {
namespace {

constexpr const char* kName = "cuda.fft_tiled";

class CudaFftTiledPlan final : public Plan {
 public:
  CudaFftTiledPlan(const ConvProblem& p, Pass pass, const TiledFftOptions& options,
                   CudaContext& context, const GpuSettings& settings)
      : p_(p),
        pass_(pass),
        context_(context),
        settings_(settings),
        g_(tiled_fft_geometry(p, pass, options)) {
    context_.activate();
    full_ = make_cuda_fft_plan(tiled_fft_subproblem(p, g_, g_.batch), pass, context, settings);
    std::size_t fft = full_->workspace_bytes();
    if (g_.last_batch != g_.batch) {
      last_ =
          make_cuda_fft_plan(tiled_fft_subproblem(p, g_, g_.last_batch), pass, context, settings);
      fft = std::max(fft, last_->workspace_bytes());
    }
    tiled_fft_set_fft_bytes(g_, static_cast<int64_t>(fft));
    const PlanInfo& sub = full_->info();
    describe_tiled_fft_plan(g_, sub, workspace_bytes(), info_);
    info_.kernel = "tiled gathers + " + sub.kernel;
    info_.math_mode = sub.math_mode;
  }

  std::size_t workspace_bytes() const override { return static_cast<std::size_t>(g_.total_bytes); }
  // This plan's tiling and math mode (the knobs change both).
  ErrorBound error_bound() const override {
    return tiled_fft_error_bound(g_, math_mode_factor(4.0, settings_.allow_tf32));
  }

 protected:
  void execute(const Tensors& t, const Workspace& ws, Stream stream) override {
    DeviceOps ops{*this, static_cast<char*>(ws.data),
                  begin_run(kName, p_, pass_, t, ws, workspace_bytes(), context_, stream)};
    run_tiled_fft_pass(g_, pass_, t, ops);
  }

 private:
  // The steps of strategy/tiled_fft_passes.hpp on the device.
  struct DeviceOps {
    CudaFftTiledPlan& plan;
    char* base;
    CUstream_st* run;
    float* patches() const { return reinterpret_cast<float*>(base + plan.g_.patches.offset); }
    float* tiles() const { return reinterpret_cast<float*>(base + plan.g_.tiles_buffer.offset); }
    float* partial() const { return reinterpret_cast<float*>(base + plan.g_.partial.offset); }
    CUstream_st* stream() const { return run; }
    void gather_patches(TiledBatch b, const float* x) {
      launch_tiled_gather_patches(plan.g_, b, plan.p_.c, plan.p_.h, plan.p_.w, x, patches(),
                                  stream());
    }
    void gather_tiles(TiledBatch b, const float* dy) {
      launch_tiled_gather_tiles(plan.g_, b, plan.p_.k, plan.p_.out_h(), plan.p_.out_w(), dy,
                                tiles(), stream());
    }
    void scatter_tiles(TiledBatch b, float* y) {
      launch_tiled_scatter_tiles(plan.g_, b, plan.p_.k, plan.p_.out_h(), plan.p_.out_w(), tiles(),
                                 y, stream());
    }
    void add_patches(TiledBatch b, float* dx) {
      launch_tiled_add_patches(plan.g_, b, plan.p_.c, plan.p_.h, plan.p_.w, patches(), dx,
                               stream());
    }
    void zero(float* dx) {
      CONVLAB_CUDA_CHECK(cudaMemsetAsync(dx, 0, plan.p_.x_bytes(), stream()));
    }
    void run_fft(TiledBatch b, float* w) {
      Tensors sub;
      sub.x = patches();
      sub.y = tiles();
      sub.w = w;
      Plan& fft = b.count == plan.g_.batch ? *plan.full_ : *plan.last_;
      fft.run(sub,
              Workspace{base + plan.g_.fft.offset, static_cast<std::size_t>(plan.g_.fft.bytes)},
              Stream{stream()});
    }
    void accumulate(float* dw) {
      const ConvProblem& p = plan.p_;
      launch_tiled_accumulate(partial(), p.k * p.c_per_group() * p.r * p.s, dw, stream());
    }
  };

  ConvProblem p_;
  Pass pass_;
  CudaContext& context_;
  GpuSettings settings_;
  TiledFftGeometry g_;
  std::unique_ptr<Plan> full_, last_;
};

class CudaFftTiled final : public CudaStrategy {
 public:
  const AlgorithmInfo& info() const override {
    static const AlgorithmInfo kInfo{
        kName,
        Device::gpu,
        Family::fft_tiled,
        "cufft+cublas",
        "FFT over output tiles (overlap-save forward, overlap-add backward): cuda.fft on "
        "tile-sized patches, memory bounded by the tile",
        /*deterministic=*/true,
        allow_tf32() ? MathMode::tf32 : MathMode::fp32,
        gpu_knobs(/*uses_cublas=*/true, tiled_fft_knobs())};
    return kInfo;
  }
  Support supports(const ConvProblem& problem, Pass pass) const override {
    const Support ready = CudaStrategy::supports(problem, pass);
    if (!ready) return ready;
    try {
      tiled_fft_geometry(problem, pass);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_problem) throw;
      return Support::no(std::string(kName) + ": tiled FFT workspace size overflows int64: " +
                         e.what());
    }
    return Support::yes();
  }
  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    // cuda.fft's per-pair factor (4, scaled by the math mode), over the default tiling: the
    // knobs are not visible here.
    return tiled_fft_error_bound(tiled_fft_geometry(problem, pass), math_mode_factor(4.0));
  }

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    const GpuSettings settings = gpu_settings(knobs);
    CudaContext& context = supported_plan_device(problem, pass, settings);
    return std::make_unique<CudaFftTiledPlan>(problem, pass, tiled_fft_options(knobs), context,
                                              settings);
  }
};

}  // namespace

void register_cuda_fft_tiled(Registry& registry) { registry.add(std::make_unique<CudaFftTiled>()); }

}  // namespace convlab::cuda
