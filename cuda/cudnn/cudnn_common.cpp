#include "cudnn_common.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "convlab/error.hpp"
#include "cuda/common/math_mode.hpp"
#include "cuda/common/run_stream.hpp"
#include "strategy/winograd_host.hpp"

namespace convlab::cuda {

namespace {
int as_int(int64_t value) { return static_cast<int>(value); }  // range checked by supports()
}  // namespace

CudnnDescriptors::CudnnDescriptors(const ConvProblem& p, bool tf32) {
  try {
    CONVLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    CONVLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    CONVLAB_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    CONVLAB_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    CONVLAB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                   as_int(p.n), as_int(p.c), as_int(p.h),
                                                   as_int(p.w)));
    CONVLAB_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                                   as_int(p.k), as_int(p.c_per_group()),
                                                   as_int(p.r), as_int(p.s)));
    CONVLAB_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        conv, as_int(p.pad_h), as_int(p.pad_w), as_int(p.stride_h), as_int(p.stride_w),
        as_int(p.dilation_h), as_int(p.dilation_w), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CONVLAB_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, as_int(p.groups)));
    CONVLAB_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, cudnn_math_type(tf32)));
    int n = 0, k = 0, oh = 0, ow = 0;
    CONVLAB_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &k, &oh, &ow));
    if (n != p.n || k != p.k || oh != p.out_h() || ow != p.out_w()) {
      throw Error(ErrorCode::backend, "cuDNN computes output " + std::to_string(n) + "x" +
                                          std::to_string(k) + "x" + std::to_string(oh) + "x" +
                                          std::to_string(ow) + " for " + p.descriptor());
    }
    CONVLAB_CUDNN_CHECK(
        cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k, oh, ow));
  } catch (...) {
    release();
    throw;
  }
}

CudnnDescriptors::~CudnnDescriptors() { release(); }

void CudnnDescriptors::release() noexcept {
  if (conv) cudnnDestroyConvolutionDescriptor(conv);
  if (w) cudnnDestroyFilterDescriptor(w);
  if (y) cudnnDestroyTensorDescriptor(y);
  if (x) cudnnDestroyTensorDescriptor(x);
  conv = nullptr, w = nullptr, y = nullptr, x = nullptr;
}

cudnnMathType_t cudnn_math_type(bool tf32) { return tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH; }

const char* cudnn_math_type_name(cudnnMathType_t type) {
  switch (type) {
    case CUDNN_DEFAULT_MATH:
      return "CUDNN_DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH:
      return "CUDNN_TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH:
      return "CUDNN_FMA_MATH";
  }
  return "unknown math type";
}

cudnnStatus_t cudnn_workspace_size(cudnnHandle_t handle, const CudnnDescriptors& d, Pass pass,
                                   int algo, std::size_t* bytes) {
  switch (pass) {
    case Pass::forward:
      return cudnnGetConvolutionForwardWorkspaceSize(
          handle, d.x, d.w, d.conv, d.y, static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
    case Pass::backward_data:
      return cudnnGetConvolutionBackwardDataWorkspaceSize(
          handle, d.w, d.y, d.conv, d.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
    case Pass::backward_filter:
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(
          handle, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

bool cudnn_declines(cudnnStatus_t status) {
  const int family = static_cast<int>(status) / 1000;
  return family == 2 || family == 3;
}

namespace {

// cudnnSetStream for one call, then back to the context's stream, so the shared handle never
// keeps a caller's stream once the run has returned.
class CudnnRunBinding {
 public:
  CudnnRunBinding(const CudaContext& context, cudnnHandle_t handle, CUstream_st* stream)
      : context_(context), handle_(handle) {
    CONVLAB_CUDNN_CHECK(cudnnSetStream(handle, stream));
  }
  ~CudnnRunBinding() { (void)cudnnSetStream(handle_, context_.stream()); }
  CudnnRunBinding(const CudnnRunBinding&) = delete;
  CudnnRunBinding& operator=(const CudnnRunBinding&) = delete;

 private:
  const CudaContext& context_;
  cudnnHandle_t handle_;
};

}  // namespace

void cudnn_run(const CudaContext& context, cudnnHandle_t handle, const CudnnDescriptors& d,
               Pass pass, int algo, const Tensors& t, void* workspace, std::size_t workspace_bytes,
               Stream stream) {
  CudnnRunBinding bound(context, handle, run_stream(context, stream));
  const float alpha = 1.0f, beta = 0.0f;
  switch (pass) {
    case Pass::forward:
      CONVLAB_CUDNN_CHECK(cudnnConvolutionForward(handle, &alpha, d.x, t.x, d.w, t.w, d.conv,
                                                  static_cast<cudnnConvolutionFwdAlgo_t>(algo),
                                                  workspace, workspace_bytes, &beta, d.y, t.y));
      break;
    case Pass::backward_data:
      CONVLAB_CUDNN_CHECK(
          cudnnConvolutionBackwardData(handle, &alpha, d.w, t.w, d.y, t.y, d.conv,
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), workspace,
                                       workspace_bytes, &beta, d.x, t.x));
      break;
    case Pass::backward_filter:
      CONVLAB_CUDNN_CHECK(
          cudnnConvolutionBackwardFilter(handle, &alpha, d.x, t.x, d.y, t.y, d.conv,
                                         static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                         workspace, workspace_bytes, &beta, d.w, t.w));
      break;
  }
}

CudaContext& cudnn_context(int device) { return device_context(device); }

static Support probe_cudnn() {
  const Support& device = device_support(default_device_index());
  if (!device) return device;
  const std::size_t version = cudnnGetVersion();
  if (version / 10000 != CUDNN_MAJOR) {
    return Support::no("cuDNN " + std::to_string(version) + " loaded, this build needs " +
                       std::to_string(CUDNN_MAJOR) + ".x (compiled with " +
                       std::to_string(CUDNN_VERSION) + ")");
  }
  try {
    cudnn_handle(cudnn_context(default_device_index()));
  } catch (const Error& e) {
    return Support::no(std::string("cuDNN unusable: ") + e.what());
  }
  return Support::yes();
}

const Support& cudnn_available() {
  static const Support support = probe_cudnn();
  return support;
}

Support cudnn_fits_legacy_api(const ConvProblem& p) {
  p.validate();
  if (p.asymmetric_padding()) {
    return Support::no(
        "cuDNN's convolution descriptor takes one padding per axis: end "
        "padding (bottom " +
        std::to_string(p.end_pad_h()) + ", right " + std::to_string(p.end_pad_w()) +
        ") differs from the start padding (top " + std::to_string(p.pad_h) + ", left " +
        std::to_string(p.pad_w) + ")");
  }
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  const struct {
    const char* what;
    int64_t elements;
  } tensors[] = {{"x", p.x_elems()}, {"w", p.w_elems()}, {"y", p.y_elems()}};
  for (const auto& t : tensors) {
    if (t.elements > kMax) {
      return Support::no("cuDNN's legacy API takes int sizes and strides: tensor " +
                         std::string(t.what) + " has " + std::to_string(t.elements) +
                         " elements > 2^31-1");
    }
  }
  return Support::yes();
}

ErrorBound cudnn_error_bound(Family family, const ConvProblem& p, Pass pass, bool tf32) {
  // Direct and GEMM algorithms sum the same products as the reference in fp32, in some
  // order (split reductions, atomics): the elementwise bound with the GEMM factor.
  // FFT and Winograd transform whole tiles, spreading rounding over them: the normwise
  // bound. cuDNN does not say its transform sizes; the full padded plane rounded up to a
  // power of two is an upper bound on the FFT size, so log2 of it bounds the tile log too.
  // Nor does it say its Winograd tiles (it runs 5x5 kernels too, on tiles whose rounding grows
  // faster than F(4x4,3x3)'s): the bound derived for the largest published tile, from its
  // transform matrices (strategy/winograd_host.hpp).
  auto log2_ceil = [](int64_t v) { return std::ceil(std::log2(double(std::max<int64_t>(v, 2)))); };
  if (family == Family::fft || family == Family::fft_tiled) {
    const double log2_size =
        log2_ceil(p.h + p.pad_h + p.end_pad_h()) + log2_ceil(p.w + p.pad_w + p.end_pad_w());
    return {ErrorBound::Kind::normwise, math_mode_factor(16.0, tf32), log2_size};
  }
  if (family == Family::winograd) {
    ErrorBound bound = winograd::vendor_winograd_error_bound(p, pass, /*partial_sums=*/1);
    bound.factor = math_mode_factor(bound.factor, tf32);
    return bound;
  }
  return {ErrorBound::Kind::elementwise, math_mode_factor(16.0, tf32), 0.0};
}

}  // namespace convlab::cuda
