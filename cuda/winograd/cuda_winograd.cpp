// cuda.winograd: the GPU twin of cpu.winograd, Winograd F(2x2,3x3)/F(4x4,3x3) for stride-1,
// dilation-1 3x3 layers, all three passes. The derivation (tiles, transforms, the adjoint of
// backward-filter, the error bound) is at the top of lib/cpu/winograd/cpu_winograd.cpp; the
// plan geometry and workspace (strategy/winograd_geometry.hpp), the refusals, knobs and bound
// (strategy/winograd_host.hpp) and the tile transforms (strategy/winograd_transform.hpp) are
// shared with the CPU, where they are tested.
//
// Per group: the filter kernel writes U (or, for backward-filter, nothing), then chunk by
// chunk the input kernel writes V, one cublasSgemmStridedBatched_64 call multiplies all
// alpha^2 transform points (the mapping is in winograd_passes.hpp), and the output kernel
// writes the destination tiles; backward-filter transforms the dy tiles instead, accumulates
// dU over the chunks (beta = 1 after the first) and ends with the filter-adjoint kernel.
// Everything is on the run's stream (run_stream.hpp); nothing allocates, synchronises or
// reads device memory back inside a run, so a run can be captured into a CUDA graph.
//
// Numerics: cuBLAS in CUBLAS_DEFAULT_MATH (fp32, no TF32) unless the allow_tf32 knob is set;
// the plan records which. Deterministic: one writer per output element, the chunks summed in
// order on one stream, cuBLAS bitwise reproducible on one architecture and SM count.
//
// Workspace (bytes): round256(cublas) + 4 (U + V + M/P of one chunk), each buffer alpha^2
// matrices whose point stride (the cuBLAS batch stride) is the matrix rounded up to 256 bytes
// (strategy/winograd_geometry.hpp with one worker, 256-byte alignment and no point skew);
// auto chunks keep V and M within kWinogradGpuChunkBytes, at least kWinogradMinChunk tiles.
//
// Not run on a GPU in the session that wrote it (none was lent): compiled everywhere nvcc is,
// its sequence and per-thread math run on the host in test_cuda_winograd_host, and the GPU
// corpus (test_gpu_algorithms) covers it where a device is present.
#include "cuda_winograd.hpp"

#include <memory>
#include <string>

#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "cuda/common/check_libs.hpp"
#include "cuda/common/cuda_strategy.hpp"
#include "cuda/common/device.hpp"
#include "cuda/common/math_mode.hpp"
#include "cuda/common/run_stream.hpp"
#include "cuda/common/settings.hpp"
#include "cuda/common/workspace_layout.hpp"
#include "strategy/winograd_host.hpp"
#include "winograd_kernels.hpp"
#include "winograd_passes.hpp"

namespace convlab::cuda {

winograd::WinogradOptions cuda_winograd_options(int m, int64_t chunk, std::size_t cublas_bytes) {
  winograd::WinogradOptions o;
  o.m = m;
  o.chunk = chunk;
  o.chunk_bytes = winograd::kWinogradGpuChunkBytes;
  o.workers = 1;
  o.alignment = static_cast<int64_t>(kWorkspaceAlignment);
  o.library_bytes = static_cast<int64_t>(cublas_bytes);
  return o;
}

ErrorBound cuda_winograd_error_bound(const ConvProblem& p, Pass pass, int m, bool tf32) {
  ErrorBound bound = winograd::winograd_error_bound(p, pass, m, /*partial_sums=*/1);
  bound.factor = math_mode_factor(bound.factor, tf32);
  return bound;
}

namespace {

constexpr const char* kName = "cuda.winograd";

cublasOperation_t op_of(char op) { return op == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N; }

// The steps of winograd_passes.hpp on the device: the kernels and cuBLAS on the run's stream.
class DeviceOps {
 public:
  DeviceOps(const CudaContext& context, const winograd::WinogradLayout& l, CUstream_st* stream)
      : context_(context), l_(l), stream_(stream) {}
  void filter(int64_t g, bool flip, const float* w, float* u) {
    launch_winograd_filter(l_, flip, g, w, u, stream_);
  }
  void input(int64_t g, const float* src, int64_t t0, int64_t count, float* v) {
    launch_winograd_input(l_, g, src, t0, count, v, stream_);
  }
  void output(int64_t g, const float* prod, int64_t t0, int64_t count, float* dst) {
    launch_winograd_output(l_, g, prod, t0, count, dst, stream_);
  }
  void gradient(int64_t g, const float* dy, int64_t t0, int64_t count, float* prod) {
    launch_winograd_gradient(l_, g, dy, t0, count, prod, stream_);
  }
  void filter_gradient(int64_t g, const float* du, float* dw) {
    launch_winograd_filter_gradient(l_, g, du, dw, stream_);
  }
  void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
            int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
            int64_t ldc, int64_t stride_c, int64_t batch) {
    const float alpha = 1.0f;
    CONVLAB_CUBLAS_CHECK(cublasSgemmStridedBatched_64(context_.cublas(), op_of(op_a), op_of(op_b),
                                                      m, n, k, &alpha, a, lda, stride_a, b, ldb,
                                                      stride_b, &beta, c, ldc, stride_c, batch));
  }

 private:
  const CudaContext& context_;
  const winograd::WinogradLayout& l_;
  CUstream_st* stream_;
};

class CudaWinogradPlan final : public CublasPlan {
 public:
  CudaWinogradPlan(const ConvProblem& p, Pass pass, const winograd::WinogradOptions& options,
                   CudaContext& context, const GpuSettings& settings)
      : CublasPlan(kName, p, pass, context, settings.allow_tf32),
        l_(winograd::winograd_layout(p, pass, options)) {
    // cuBLAS's region is the layout's library scratch, first in the workspace.
    set_workspace(l_.workspace_bytes, 0, static_cast<std::size_t>(l_.library_bytes));
    winograd::describe_winograd_plan(l_, info_, "cublas");
    info_.kernel = "winograd transform kernels + cublasSgemmStridedBatched";
    info_.math_mode = settings.math_mode();
  }

  // This plan's variant and math mode (the knobs change both).
  ErrorBound error_bound() const override {
    return cuda_winograd_error_bound(p_, pass_, l_.m, tf32_);
  }

 protected:
  void run_pass(const Tensors& t, unsigned char* base, CUstream_st* s) override {
    DeviceOps ops(context_, l_, s);
    run_winograd_pass(l_, pass_, p_.groups, t, winograd_buffers(l_, base), ops);
  }

 private:
  winograd::WinogradLayout l_;
};

class CudaWinograd final : public CudaStrategy {
 public:
  const AlgorithmInfo& info() const override {
    static const AlgorithmInfo kInfo{
        kName,
        Device::gpu,
        Family::winograd,
        "winograd+cublas",
        "Winograd F(2x2,3x3)/F(4x4,3x3): tile-transform kernels + cuBLAS strided-batched "
        "SGEMM over the transform points, stride-1 dense 3x3",
        /*deterministic=*/true,
        allow_tf32() ? MathMode::tf32 : MathMode::fp32,
        gpu_knobs(/*uses_cublas=*/true,
                  winograd::winograd_knobs("within 64 MiB of transforms, at least 32"))};
    return kInfo;
  }

  // The shape first, so that what Winograd cannot do is said with or without a device.
  Support supports(const ConvProblem& problem, Pass pass) const override {
    problem.validate();
    const Support shape = winograd::winograd_shape_support(kName, problem);
    if (!shape) return shape;
    const Support ready = CudaStrategy::supports(problem, pass);
    if (!ready) return ready;
    try {
      winograd::winograd_layout(problem, pass, cuda_winograd_options(4, 0, 0));
      winograd::winograd_layout(problem, pass, cuda_winograd_options(2, 0, 0));
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_problem) throw;
      return Support::no(std::string(kName) + ": workspace size overflows int64: " + e.what());
    }
    return Support::yes();
  }

  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    // The knobs are not known here: the larger variant's bound, in the default math mode.
    ErrorBound bound = winograd::winograd_worst_error_bound(problem, pass, /*partial_sums=*/1);
    bound.factor = math_mode_factor(bound.factor, gpu_settings(default_knobs(info())).allow_tf32);
    return bound;
  }

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    const GpuSettings settings = gpu_settings(knobs);
    CudaContext& context = supported_plan_device(problem, pass, settings);
    const winograd::WinogradOptions options = winograd::winograd_options(
        knobs,
        cuda_winograd_options(4, 0, cublas_workspace_bytes(settings, context.info().cc_major)));
    return std::make_unique<CudaWinogradPlan>(problem, pass, options, context, settings);
  }
};

}  // namespace

void register_cuda_winograd(Registry& registry) { registry.add(std::make_unique<CudaWinograd>()); }

}  // namespace convlab::cuda
