// cuda.im2col: convolution as im2col + cuBLAS SGEMM on the GPU, all three passes.
//
// Derivation (as cpu.im2col's; one group g, Cg = C/g, Kg = K/g, P = OH*OW, L = Cg*R*S).
// The column buffer of strategy/im2col_index.hpp, col[(c*R + i)*S + j, m*P + oh*OW + ow] =
// x[m, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw] (zero in the padding), holds b images side by
// side. A KCRS filter group is the row-major matrix W[Kg, L], so per image m of the chunk:
//
//   forward          Y_m[Kg, P]   = W[Kg, L] * col_m[L, P]              col_m = columns m*P..
//   backward-data    col_m[L, P]  = W^T[L, Kg] * dY_m[Kg, P],  dx = col2im(col)  (a gather)
//   backward-filter  dW[Kg, L]   += dY_chunk[Kg, b*P] * col^T[b*P, L]   over the chunks
//
// col2im is the adjoint of im2col, computed as a gather (each dx element sums its taps in a
// fixed order): no atomics, deterministic. Backward-filter stages the chunk's dY (images at a
// stride of K*P in NCHW) into one [Kg, b*P] matrix so that the sum over images is the GEMM's
// inner dimension; with b = 1 it reads dY in place.
//
// Column-major mapping. cuBLAS is column-major: a row-major A[rows, cols] with leading
// dimension ld is the column-major A^T with the same ld. So the row-major products become
//   forward          Y^T = col^T * W^T        sgemm(N, N, m=P,  n=Kg, k=L,   col, W, Y)
//   backward-data    col^T = dY^T * W         sgemm(N, T, m=P,  n=L,  k=Kg,  dY, W, col)
//   backward-filter  dW^T = col * dY^T        sgemm(T, N, m=L,  n=Kg, k=b*P, col, dY, dW)
// The forward and backward-data GEMMs of a chunk's b images are one strided-batched call:
// col_m at column offset m*P (ld b*P, stride P), Y_m / dY_m at stride K*P, W shared (stride
// 0). The 1x1 / stride-1 / pad-0 shortcut: col_m = x_m ([Cg, H*W] at stride C*H*W), so the
// forward GEMM reads x and the backward-data GEMM writes dx in place, batched over all mb
// images; backward-filter reads x in place when b = 1.
//
// Numerics: cuBLAS in CUBLAS_DEFAULT_MATH (fp32, no TF32) unless CONVLAB_ALLOW_TF32=1.
// Workspace (bytes; cuda_im2col.hpp): round256(cublas) + round256(4 L b P) + 4 Kg b P (the
// last only for backward-filter with b > 1); cuBLAS gets its part through
// cublasSetWorkspace at every run. The 64-bit cuBLAS API (_64) takes every size as it is.
#include "cuda_im2col.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "cuda/common/check_libs.hpp"
#include "cuda/common/cuda_strategy.hpp"
#include "cuda/common/device.hpp"
#include "cuda/common/math_mode.hpp"
#include "cuda/common/run_stream.hpp"
#include "cuda/common/settings.hpp"
#include "cuda/common/workspace_layout.hpp"
#include "im2col_kernels.hpp"
#include "im2col_passes.hpp"

namespace convlab::cuda {

std::string CudaIm2colLayout::describe() const {
  return "images per buffer " + std::to_string(images) + (pointwise ? ", 1x1 shortcut" : "") +
         ", col " + std::to_string(col_bytes) + " B, stage " + std::to_string(stage_bytes) +
         " B, cuBLAS workspace " + std::to_string(cublas_bytes) + " B";
}

CudaIm2colLayout cuda_im2col_layout(const ConvProblem& p, Pass pass, int64_t images_setting,
                                    std::size_t cublas_bytes) {
  p.validate();
  const int64_t pixels = p.out_h() * p.out_w();
  const int64_t rows = checked_mul(p.c_per_group(), checked_mul(p.r, p.s, "L"), "L");
  const int64_t col_per_image = checked_mul(checked_mul(rows, pixels, "col"), 4, "col bytes");
  CudaIm2colLayout l;
  int64_t b = images_setting;
  if (b <= 0) {
    b = (kIm2colTargetColumns + pixels - 1) / pixels;
    b = std::min(b, std::max<int64_t>(1, kIm2colColumnCap / col_per_image));
  }
  l.images = std::max<int64_t>(1, std::min(b, p.n));
  l.chunks = (p.n + l.images - 1) / l.images;
  const bool one_by_one = p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                          p.pad_h == 0 && p.pad_w == 0 && p.end_pad_h() == 0 && p.end_pad_w() == 0;
  l.pointwise = one_by_one && (pass != Pass::backward_filter || l.images == 1);
  const int64_t col = l.pointwise ? 0 : checked_mul(col_per_image, l.images, "col bytes");
  const int64_t stage =
      pass == Pass::backward_filter && l.images > 1
          ? checked_mul(checked_mul(p.k_per_group(), pixels, "stage"), 4 * l.images, "stage")
          : 0;
  WorkspaceLayout layout;
  const int cublas_slot = layout.add(cublas_bytes, "cuBLAS workspace");
  const int col_slot = layout.add(static_cast<std::size_t>(col), "column buffer");
  const int stage_slot = layout.add(static_cast<std::size_t>(stage), "dy stage");
  l.cublas_offset = layout.offset(cublas_slot), l.cublas_bytes = cublas_bytes;
  l.col_offset = layout.offset(col_slot), l.col_bytes = static_cast<std::size_t>(col);
  l.stage_offset = layout.offset(stage_slot), l.stage_bytes = static_cast<std::size_t>(stage);
  l.workspace_bytes = layout.bytes();
  return l;
}

ErrorBound cuda_im2col_error_bound(const ConvProblem& p, Pass pass, int64_t chunks) {
  return cuda_im2col_error_bound(p, pass, chunks, allow_tf32());
}

ErrorBound cuda_im2col_error_bound(const ConvProblem& p, Pass pass, int64_t chunks, bool tf32) {
  // Each output is an fp32 sum along a chain of at most `chain` additions: forward the GEMM's
  // L; backward-data a Kg dot product per tap, then at most R*S taps gathered; backward-filter
  // the GEMM's inner b*P per chunk, accumulated over the chunks (beta = 1). Higham & Mary's
  // probabilistic bound lambda*sqrt(chain)*u*sum|a||b| with lambda = 6, plus 2u for the final
  // roundings, as cpu.im2col (lib/cpu/im2col/cpu_im2col.cpp, error_bound).
  double chain = 0;
  switch (pass) {
    case Pass::forward:
      chain = double(p.c_per_group()) * p.r * p.s;
      break;
    case Pass::backward_data:
      chain = double(p.k_per_group()) + double(p.r) * p.s;
      break;
    case Pass::backward_filter:
      chain = double(p.n) * p.out_h() * p.out_w() + chunks;
      break;
  }
  return {ErrorBound::Kind::elementwise, math_mode_factor(6.0 * std::sqrt(chain) + 2.0, tf32),
          0.0};
}

namespace {

constexpr const char* kName = "cuda.im2col";

cublasOperation_t op_of(char op) { return op == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N; }

// The operations of a pass on the device: cuBLAS on the context's handle (bound to the run's
// stream for the run) and the kernels on that stream.
class DeviceOps final : public Im2colOps {
 public:
  DeviceOps(CudaContext& context, CUstream_st* stream) : context_(context), stream_(stream) {}
  void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
            int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
            int64_t ldc, int64_t stride_c, int64_t batch) override {
    const float alpha = 1.0f;
    CONVLAB_CUBLAS_CHECK(cublasSgemmStridedBatched_64(context_.cublas(), op_of(op_a), op_of(op_b),
                                                      m, n, k, &alpha, a, lda, stride_a, b, ldb,
                                                      stride_b, &beta, c, ldc, stride_c, batch));
  }
  void im2col(const Im2colGeometry& g, const float* x_group, float* col) override {
    launch_im2col(g, x_group, col, stream_);
  }
  void col2im(const Im2colGeometry& g, const float* col, float* dx_group) override {
    launch_col2im(g, col, dx_group, stream_);
  }
  void stage(const float* src, int64_t src_image_stride, int64_t images, int64_t rows, int64_t cols,
             float* dst) override {
    launch_stage(src, src_image_stride, images, rows, cols, dst, stream_);
  }

 private:
  CudaContext& context_;
  CUstream_st* stream_;
};

class CudaIm2colPlan final : public CublasPlan {
 public:
  CudaIm2colPlan(const ConvProblem& p, Pass pass, CudaContext& context, int64_t images,
                 const GpuSettings& settings)
      : CublasPlan(kName, p, pass, context, settings.allow_tf32),
        layout_(cuda_im2col_layout(p, pass, images,
                                   cublas_workspace_bytes(settings, context.info().cc_major))) {
    set_workspace(layout_.workspace_bytes, layout_.cublas_offset, layout_.cublas_bytes);
    info_.kernel = "im2col/col2im kernels, cublasSgemmStridedBatched";
    info_.math_mode = settings.math_mode();
    info_.workspace_split = {{"columns", layout_.col_bytes},
                             {"stage", layout_.stage_bytes},
                             {"cublas", layout_.cublas_bytes}};
    info_.details = {{"layout", layout_.describe()}};
  }

  ErrorBound error_bound() const override {
    return cuda_im2col_error_bound(p_, pass_, layout_.chunks, tf32_);
  }

 protected:
  void run_pass(const Tensors& t, unsigned char* base, CUstream_st* s) override {
    float* col = layout_.col_bytes ? reinterpret_cast<float*>(base + layout_.col_offset) : nullptr;
    float* stage =
        layout_.stage_bytes ? reinterpret_cast<float*>(base + layout_.stage_offset) : nullptr;
    DeviceOps ops(context_, s);
    run_im2col_pass(p_, pass_, layout_, t, col, stage, ops);
  }

 private:
  CudaIm2colLayout layout_;
};

std::vector<KnobSpec> cuda_im2col_knobs(std::optional<int64_t> fixed_images) {
  std::vector<KnobSpec> knobs = gpu_knobs(/*uses_cublas=*/true);
  KnobSpec images = integer_knob(
      "images", "auto", 1, int64_t{1} << 40, /*allow_auto=*/true, "CONVLAB_CUDA_IM2COL_IMAGES",
      "images per column buffer and batched GEMM; auto: the fewest reaching the target width");
  if (fixed_images) {
    images.default_value = *fixed_images > 0 ? std::to_string(*fixed_images) : "auto";
    images.environment_default.clear();
  }
  knobs.push_back(std::move(images));
  return knobs;
}

class CudaIm2col final : public CudaStrategy {
 public:
  /// fixed_images: the images knob's default instead of CONVLAB_CUDA_IM2COL_IMAGES (0 = auto).
  explicit CudaIm2col(std::optional<int64_t> fixed_images = std::nullopt)
      : info_{kName,
              Device::gpu,
              Family::gemm,
              "cublas",
              "im2col/col2im-gather kernels + cuBLAS SGEMM (strided-batched over images)",
              /*deterministic=*/true,
              allow_tf32() ? MathMode::tf32 : MathMode::fp32,
              cuda_im2col_knobs(fixed_images)} {}
  const AlgorithmInfo& info() const override { return info_; }
  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    problem.validate();
    const GpuSettings settings = gpu_settings(knobs);
    return std::make_unique<CudaIm2colPlan>(problem, pass, plan_device(kName, settings.device),
                                            images(knobs), settings);
  }
  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    const KnobValues knobs = default_knobs(info_);
    const int64_t chunks = cuda_im2col_layout(problem, pass, images(knobs), 0).chunks;
    return cuda_im2col_error_bound(problem, pass, chunks, gpu_settings(knobs).allow_tf32);
  }

 private:
  static int64_t images(const KnobValues& knobs) {
    return knob_integer(knobs, "images").value_or(0);
  }
  AlgorithmInfo info_;
};

}  // namespace

std::unique_ptr<Algorithm> make_cuda_im2col(int64_t images_setting) {
  return std::make_unique<CudaIm2col>(std::max<int64_t>(0, images_setting));
}

void register_cuda_im2col(Registry& registry) { registry.add(std::make_unique<CudaIm2col>()); }

}  // namespace convlab::cuda
