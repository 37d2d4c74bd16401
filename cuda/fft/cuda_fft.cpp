// cuda.fft: convolution in the frequency domain with cuFFT and cuBLAS, all three passes.
//
// Derivation (fft_geometry.hpp has the full argument; this is what the executor does with
// it). Every tensor is placed in real Hf x Wf planes by one rule per tensor: x at slot
// i + pad (only the x_count rows/columns some kept output reaches), w at slot u*dilation
// (zero-inserted), y at slot o*stride (upsampled). Hf, Wf are 2,3,5,7-smooth and large
// enough that no circular wraparound reaches a kept output. With ^ the 2-D DFT:
//
//   forward          y = x (*) w   (correlation)   Y^[n,k] = sum_c X^[n,c] conj(W^[k,c])
//   backward-data    x = y  *  w   (convolution)   X^[n,c] = sum_k Y^[n,k] W^[k,c]
//   backward-filter  w = x (*) y   (correlation)   W^[k,c] = sum_n conj(Y^[n,k]) X^[n,c]
//
// (sums over the group's channels), read back at the output tensor's slots: correlation is
// multiplication by the conjugate spectrum. The inverse DFT of cuFFT (C2R) is unnormalised,
// so the crop multiplies by 1/(Hf*Wf). Real planes have Hermitian spectra, so the half
// spectrum of B = Hf*(Wf/2 + 1) bins carries everything (R2C/C2R).
//
// Per-bin products. The spectra are frequency-major (bin b of plane p at b*planes + p:
// cuFFT writes them so directly through its output stride, ostride = planes, odist = 1, and
// reads them back the same way), so for each bin the spectra of a tensor form one small
// row-major matrix (x: [N, C], w: [K, C/g], y: [N, K]) and each pass is, per group, a
// complex GEMM batched over the bins with a stride of one bin's planes:
// cublasCgemmStridedBatched_64, its column-major mapping derived in fft_cgemm.hpp.
//
// Degenerate planes (fft_transform.hpp). cuFFT is never asked for a transform of size 1.
// With Wf = 1 the plane is a column: a rank-1 R2C along H gives bins 0..Hf/2; the others are
// their conjugates (real data), so the GEMMs and the C2R need only those. Hf = 1 is a rank-1
// transform along W with exactly the geometry's bins; Hf = Wf = 1 is the identity (a copy
// kernel).
//
// Steps of a run (on the caller's stream, or the context's when it gives none), with the knob
// staging=fused (the default): place inputs A and B side by side in the staging by one gather
// (fft_staging.hpp), R2C -> spectra A, R2C -> spectra B; with staging=separate: place A ->
// staging, R2C -> spectra A, place B -> staging, R2C -> spectra B. Then CGEMM per group ->
// spectra of the output; C2R -> staging; crop with the scale into the output tensor. Fused
// saves one launch and costs staging room for both inputs; neither has been timed on a GPU.
//
// Crop fused into the inverse (knob crop, default separate; fft_options.hpp): with
// crop=fused the C2R's output goes through a cuFFT LTO store callback (fft_crop_callback.cu,
// attached to the C2R plan before it is made) that keeps each value landing on a kept slot,
// scaled, at its output element, and drops the rest: the staging planes are not written by
// the C2R nor read back. The callback is handed only the C2R's output pointer (the staging),
// so a run first writes the crop's target into the staging header just before it, and zeros
// x's unplaced rows and columns (fft_kernels.hpp: FftCropTarget, fft_crop_store).
//
// Contiguous transforms (knob layout, default strided): with layout=contiguous the R2Cs write
// plane-major spectra (unit stride) into the transpose buffer and a transpose kernel moves
// them to frequency-major; the output's spectra are transposed back before its C2R.
//
// One graph per pass (knob graph, default off): the run's launches are captured into one CUDA
// graph on the first run for a stream and its pointers and replayed with cudaGraphLaunch
// after; other pointers capture again and update it (pass_graph.hpp). Off by default: the
// capture allocates inside run (graph objects), which the run contract forbids for a default,
// and the launch overhead it saves is unmeasured. Inside a caller's own capture the launches go
// into the caller's graph as they are.
//
// Cached filters (knob cache_filters, default off): in forward and backward-data w is an
// input, and its spectra stay in the workspace after a run. With the knob on, a run whose w
// and workspace pointers are those of the plan's previous run skips w's place and R2C and
// uses those spectra; the caller promises not to change w's values or that part of the
// workspace in between (weights fixed between runs, a workspace not shared with other
// plans). Off, every run transforms w, as training needs (its weights change every step).
//
// Workspace (fft_geometry.hpp's total_bytes, then cuBLAS's): spectra of x, w and y
// (8 bytes * planes * B each), with layout=contiguous the transpose buffer (8 bytes * B * the
// largest tensor's planes), with crop=fused the 256-byte staging header, staging (4 bytes *
// Hf*Wf * the largest tensor's planes, or both inputs' with staging=fused), the
// cuFFT work area (the largest of the three plans', cufftSetAutoAllocation(0), placed with
// cufftSetWorkArea at every run), and the cuBLAS workspace (settings.hpp) set with
// cublasSetWorkspace. Plans are made in plan() with cufftMakePlanMany64 (64-bit sizes).
#include <cufft.h>
#include <cufftXt.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "cuda/common/check_libs.hpp"
#include "cuda/common/cuda_strategy.hpp"
#include "cuda/common/device.hpp"
#include "cuda/common/math_mode.hpp"
#include "cuda/common/pass_graph.hpp"
#include "cuda/common/run_stream.hpp"
#include "cuda/common/settings.hpp"
#include "cuda/common/workspace_layout.hpp"
#include "cuda_fft_plan.hpp"
#include "fft_cgemm.hpp"
#include "fft_crop_callback.hpp"
#include "fft_kernels.hpp"
#include "fft_options.hpp"
#include "fft_passes.hpp"

namespace convlab::cuda {
namespace {

constexpr const char* kName = "cuda.fft";

cublasOperation_t op_of(char op) {
  return op == 'N' ? CUBLAS_OP_N : op == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
}

/// A cuFFT plan (RAII), made with auto-allocation off: the work area comes from the
/// workspace at every run.
class FftPlanHandle {
 public:
  FftPlanHandle() = default;
  FftPlanHandle(const FftPlanHandle&) = delete;
  FftPlanHandle& operator=(const FftPlanHandle&) = delete;
  ~FftPlanHandle() {
    if (made_) cufftDestroy(handle_);
  }
  /// Makes the plan of `l` (nothing for rank 0); returns the work-area bytes it needs. With
  /// `crop_callback` (a C2R of the fused crop), the crop's LTO store callback is attached
  /// first: cuFFT links it into the plan's kernels while making the plan.
  std::size_t make(const CufftLayout& l, CUstream_st* stream, bool crop_callback = false) {
    if (l.rank == 0) return 0;
    CONVLAB_CUFFT_CHECK(cufftCreate(&handle_));
    made_ = true;
    if (crop_callback) {
      // The callback reads its target from the staging header, not from caller_info.
      CONVLAB_CUFFT_CHECK(cufftXtSetJITCallback(handle_, kFftCropCallbackSymbol,
                                                kFftCropCallbackLto, kFftCropCallbackLto_size,
                                                CUFFT_CB_ST_REAL, caller_info_));
    }
    CONVLAB_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
    std::size_t work = 0;
    const cufftResult status = make_plan(handle_, l, &work);
    if (status != CUFFT_SUCCESS && crop_callback && status != CUFFT_ALLOC_FAILED) {
      refuse_if_only_the_callback_fails(l, status);
    }
    CONVLAB_CUFFT_CHECK(status);
    CONVLAB_CUFFT_CHECK(cufftSetStream(handle_, stream));
    return work;
  }
  bool made() const { return made_; }
  cufftHandle get() const { return handle_; }

 private:
  static cufftResult make_plan(cufftHandle handle, const CufftLayout& l, std::size_t* work) {
    long long n[2] = {l.n[0], l.n[1]}, in[2] = {l.inembed[0], l.inembed[1]},
              out[2] = {l.onembed[0], l.onembed[1]};
    return cufftMakePlanMany64(handle, l.rank, n, in, l.istride, l.idist, out, l.ostride, l.odist,
                               l.forward ? CUFFT_R2C : CUFFT_C2R, l.batch, work);
  }

  // cuFFT links an LTO callback into its kernels at plan time (nvJitLink), and that link can
  // fail on a machine where everything else works: on the H200 lent on 2026-12-04 (CUDA 13.0,
  // cuFFT 12.0.0.61, driver 580) every plan with any LTO callback, even NVIDIA's sample's
  // 1-D one, failed with CUFFT_INTERNAL_ERROR. When the same plan without the callback is
  // made, the crop cannot be fused on this machine: unsupported (crop=separate runs), not a
  // backend failure.
  static void refuse_if_only_the_callback_fails(const CufftLayout& l, cufftResult status) {
    cufftHandle plain = 0;
    if (cufftCreate(&plain) != CUFFT_SUCCESS) return;
    std::size_t work = 0;
    cufftSetAutoAllocation(plain, 0);
    const cufftResult without = make_plan(plain, l, &work);
    cufftDestroy(plain);
    if (without != CUFFT_SUCCESS) return;
    throw Error(ErrorCode::unsupported,
                "crop=fused: cuFFT could not make the C2R plan with the LTO store callback (" +
                    cufft_status_name(status) +
                    ") although it makes the same plan without it: cuFFT's link of LTO "
                    "callbacks fails on this machine; crop=separate computes the same");
  }

  cufftHandle handle_ = 0;
  bool made_ = false;
  void* caller_info_[1] = {nullptr};  // one device; kept for the plan's life
};

// The operations of a pass on the device: the kernels, cuFFT and cuBLAS on the run's stream.
class DeviceOps final : public FftOps {
 public:
  DeviceOps(CudaContext& context, FftPlanHandle* plans, CUstream_st* stream)
      : context_(context), plans_(plans), stream_(stream) {}
  void place(const FftPlacement& placement, const float* src, int64_t src_h, int64_t src_w,
             int64_t planes, int64_t hf, int64_t wf, float* staging) override {
    launch_place(placement, src, src_h, src_w, planes, hf, wf, staging, stream_);
  }
  void place_pair(const StagedInput& a, const StagedInput& b, const FftStagingLayout& layout,
                  int64_t hf, int64_t wf, float* staging) override {
    launch_place_pair(a, b, layout, hf, wf, staging, stream_);
  }
  void transform(int which, const CufftLayout& l, float* real, float* spectrum) override {
    if (l.rank == 0 && l.forward) {
      launch_real_to_spectrum(real, l.batch, spectrum, stream_);
    } else if (l.rank == 0) {
      launch_spectrum_to_real(spectrum, l.batch, real, stream_);
    } else if (l.forward) {
      CONVLAB_CUFFT_CHECK(
          cufftExecR2C(plans_[which].get(), real, reinterpret_cast<cufftComplex*>(spectrum)));
    } else {
      CONVLAB_CUFFT_CHECK(
          cufftExecC2R(plans_[which].get(), reinterpret_cast<cufftComplex*>(spectrum), real));
    }
  }
  void cgemm(const CgemmCall& c, const float* a, const float* b, float* out,
             int64_t bins) override {
    const cuComplex one = {1.0f, 0.0f}, zero = {0.0f, 0.0f};
    CONVLAB_CUBLAS_CHECK(cublasCgemmStridedBatched_64(
        context_.cublas(), op_of(c.a.op), op_of(c.b.op), c.m, c.n, c.k, &one,
        reinterpret_cast<const cuComplex*>(a), c.a.ld, c.a.stride,
        reinterpret_cast<const cuComplex*>(b), c.b.ld, c.b.stride, &zero,
        reinterpret_cast<cuComplex*>(out), c.c.ld, c.c.stride, bins));
  }
  void crop(const FftPlacement& placement, const float* staging, int64_t hf, int64_t wf,
            int64_t planes, int64_t dst_h, int64_t dst_w, float scale, float* dst) override {
    launch_crop(placement, staging, hf, wf, planes, dst_h, dst_w, scale, dst, stream_);
  }
  void inverse_cropped(const CufftLayout& l, float* spectrum, float* real,
                       const FftCropTarget& target) override {
    launch_crop_prepare(target, l.batch,
                        reinterpret_cast<unsigned char*>(real) - kFftCropHeaderBytes, stream_);
    if (l.rank == 0) {
      launch_spectrum_to_cropped(spectrum, l.batch, target, stream_);
    } else {
      CONVLAB_CUFFT_CHECK(
          cufftExecC2R(plans_[2].get(), reinterpret_cast<cufftComplex*>(spectrum), real));
    }
  }
  void transpose(const float* src, int64_t rows, int64_t cols, float* dst) override {
    launch_transpose_complex(src, rows, cols, dst, stream_);
  }

 private:
  CudaContext& context_;
  FftPlanHandle* plans_;
  CUstream_st* stream_;
};

class CudaFftPlan final : public Plan {
 public:
  CudaFftPlan(const ConvProblem& p, Pass pass, CudaContext& context, const GpuSettings& settings,
              const CudaFftOptions& options)
      : p_(p),
        pass_(pass),
        context_(context),
        tf32_(settings.allow_tf32),
        cache_filters_(options.cache_filters && pass != Pass::backward_filter),
        graph_(options.graph) {
    context_.activate();
    // The plans' work areas decide the last buffer of the geometry: plan, then lay out.
    const FftStaging staging = options.staging;
    schedule_ = fft_schedule(p, pass, 0, staging, options.layout, options.crop);
    std::size_t work = 0;
    const CufftLayout* layouts[3] = {&schedule_.input_a, &schedule_.input_b, &schedule_.output};
    for (int i = 0; i < 3; ++i) {
      const bool callback = i == 2 && options.crop == FftCrop::fused;
      work = std::max(work, plans_[i].make(*layouts[i], context_.stream(), callback));
    }
    schedule_ =
        fft_schedule(p, pass, static_cast<int64_t>(work), staging, options.layout, options.crop);
    layout_.add(static_cast<std::size_t>(schedule_.geometry.total_bytes), "FFT buffers");
    cublas_slot_ =
        layout_.add(cublas_workspace_bytes(settings, context.info().cc_major), "cuBLAS");
    const FftGeometry& g = schedule_.geometry;
    info_.kernel = "cufft r2c/c2r, cublasCgemmStridedBatched";
    info_.transform = "fft " + std::to_string(g.h.size) + "x" + std::to_string(g.w.size);
    info_.math_mode = settings.math_mode();
    info_.workspace_split = {
        {"fft_buffers", static_cast<std::size_t>(g.total_bytes) - g.library_work.bytes},
        {"cufft_work", g.library_work.bytes},
        {"cublas", layout_.size(cublas_slot_)}};
    info_.details = {
        {"needed", std::to_string(g.h.needed) + "x" + std::to_string(g.w.needed)},
        {"bins", std::to_string(schedule_.transform.bins)},
        {"layout", schedule_.transform.describe()},
        {"staging", staging == FftStaging::fused
                        ? "fused (both inputs placed by one launch, side by side)"
                        : "separate (one placement launch per input)"},
        {"graph", options.graph ? "on (one CUDA graph per pass: captured on the first run "
                                  "for a stream and pointers, replayed after)"
                                : "off"},
        {"crop", options.crop == FftCrop::fused
                     ? "fused (the C2R's LTO store callback writes the output)"
                     : "separate (C2R into the staging, then a crop kernel)"},
        {"transform_layout", schedule_.transposes()
                                 ? "contiguous (plane-major transforms, transposed to and from "
                                   "frequency-major)"
                                 : "strided (frequency-major through cuFFT's strides)"},
        {"filter_transform", pass == Pass::backward_filter ? "none (w is this pass's output)"
                             : cache_filters_
                                 ? "cached (reused while w and the workspace stay the same)"
                                 : "every run"}};
  }

  std::size_t workspace_bytes() const override { return layout_.bytes(); }
  // cpu.fft's normwise bound (factor 4, log2 of the transform size), scaled by the math
  // mode: the CGEMMs are the only part TF32 touches.
  ErrorBound error_bound() const override {
    const FftGeometry& g = schedule_.geometry;
    return {ErrorBound::Kind::normwise, math_mode_factor(4.0, tf32_),
            std::log2(double(g.h.size) * double(g.w.size))};
  }

 protected:
  // Host-side settings and asynchronous work on `stream` only: capturable into a graph.
  void execute(const Tensors& t, const Workspace& ws, Stream stream) override {
    CUstream_st* s = begin_run(kName, p_, pass_, t, ws, workspace_bytes(), context_, stream);
    unsigned char* base = static_cast<unsigned char*>(ws.data);
    CublasRunBinding cublas(context_, s, layout_.at<void>(base, cublas_slot_),
                            layout_.size(cublas_slot_), tf32_);
    const FftBuffer& work = schedule_.geometry.library_work;
    for (FftPlanHandle& plan : plans_) {
      if (!plan.made()) continue;
      CONVLAB_CUFFT_CHECK(cufftSetStream(plan.get(), s));
      if (work.bytes > 0) CONVLAB_CUFFT_CHECK(cufftSetWorkArea(plan.get(), base + work.offset));
    }
    DeviceOps ops(context_, plans_, s);
    // The cache is keyed by the pointers alone: the knob's contract is that the caller keeps
    // w's values and the workspace's w spectra untouched between runs.
    const bool reuse = cache_filters_ && t.w == cached_w_ && ws.data == cached_workspace_;
    // A run that transforms w and fails half way leaves no spectra to reuse.
    if (!reuse) cached_w_ = nullptr, cached_workspace_ = nullptr;
    // The variant is part of the key: reusing w's spectra leaves launches out.
    const GraphKey key{s, t.x, t.w, t.y, ws.data, reuse ? 1 : 0};
    graph_.run(key, s, [&] { run_fft_pass(p_, schedule_, t, base, ops, reuse); });
    if (cache_filters_) cached_w_ = t.w, cached_workspace_ = ws.data;
  }

 private:
  ConvProblem p_;
  Pass pass_;
  CudaContext& context_;
  bool tf32_;
  FftSchedule schedule_;
  FftPlanHandle plans_[3];  // input_a, input_b, output
  WorkspaceLayout layout_;
  int cublas_slot_ = 0;
  bool cache_filters_ = false;
  const float* cached_w_ = nullptr;  // the filters and workspace of the last run, when cached
  const void* cached_workspace_ = nullptr;
  PassGraph graph_;
};

std::vector<KnobSpec> cuda_fft_knobs() {
  return gpu_knobs(
      /*uses_cublas=*/true,
      {boolean_knob(
           "cache_filters", false, "CONVLAB_CUDA_FFT_CACHE_FILTERS",
           "fwd/bwd_data: transform w only when w or the workspace pointer changed since the last "
           "run (weights fixed between runs, workspace not shared); off: every run transforms w"),
       choice_knob(
           "staging", "fused", {"fused", "separate"}, "",
           "fused: both inputs placed into the transform planes by one launch, side by side "
           "(staging holds both); separate: one placement launch per input, staging holds the "
           "largest"),
       choice_knob(
           "crop", "separate", {"separate", "fused"}, "",
           "separate: the C2R writes the staging planes and a kernel crops and scales them into "
           "the output; fused: a cuFFT LTO store callback (linked at plan time, needs nvJitLink) "
           "writes the kept values scaled into the output, the staging planes neither written nor "
           "read"),
       choice_knob(
           "layout", "strided", {"strided", "contiguous"}, "",
           "strided: cuFFT reads and writes frequency-major spectra through its strides; "
           "contiguous: unit-stride batched transforms into a plane-major buffer (8*B*largest "
           "tensor's planes bytes more) and a transpose kernel to or from frequency-major"),
       boolean_knob(
           "graph", false, "",
           "on: the pass is captured into one CUDA graph on the first run for a stream and its "
           "pointers and replayed after (capture allocates; replays do not); off: launches issued "
           "one by one")});
}

class CudaFft final : public CudaStrategy {
 public:
  const AlgorithmInfo& info() const override {
    // cuFFT and cuBLAS give bitwise-identical results run to run on the same GPU and setup.
    static const AlgorithmInfo kInfo{
        kName,
        Device::gpu,
        Family::fft,
        "cufft+cublas",
        "cuFFT R2C/C2R + per-bin complex GEMMs (cublasCgemmStridedBatched), "
        "frequency-major spectra",
        /*deterministic=*/true, allow_tf32() ? MathMode::tf32 : MathMode::fp32,
        cuda_fft_knobs()};
    return kInfo;
  }
  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    problem.validate();
    const GpuSettings settings = gpu_settings(knobs);
    CudaFftOptions options;
    options.cache_filters = knob_boolean(knobs, "cache_filters");
    options.staging = fft_staging_from(knob_text(knobs, "staging"));
    options.graph = knob_boolean(knobs, "graph");
    options.crop = fft_crop_from(knob_text(knobs, "crop"));
    options.layout = fft_batch_layout_from(knob_text(knobs, "layout"));
    return std::make_unique<CudaFftPlan>(problem, pass, plan_device(kName, settings.device),
                                         settings, options);
  }
  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    // The plan's bound (CudaFftPlan::error_bound) under the default math mode.
    const FftGeometry g = fft_geometry(problem, pass);
    return {ErrorBound::Kind::normwise,
            math_mode_factor(4.0, gpu_settings(default_knobs(info())).allow_tf32),
            std::log2(double(g.h.size) * double(g.w.size))};
  }
};

}  // namespace

std::unique_ptr<Plan> make_cuda_fft_plan(const ConvProblem& problem, Pass pass,
                                         CudaContext& context, const GpuSettings& settings,
                                         const CudaFftOptions& options) {
  return std::make_unique<CudaFftPlan>(problem, pass, context, settings, options);
}

void register_cuda_fft(Registry& registry) { registry.add(std::make_unique<CudaFft>()); }

}  // namespace convlab::cuda
