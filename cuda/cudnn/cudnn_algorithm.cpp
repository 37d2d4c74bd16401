// The cudnn.* baselines: each legacy cuDNN 9 convolution algorithm behind the convlab
// interface, plus cudnn.find (cudnn_find.cpp).
//
// The contract maps one to one onto cuDNN's own: supports() is the workspace-size query
// (cudnnGet*WorkspaceSize answers CUDNN_STATUS_NOT_SUPPORTED* for an algorithm that does not
// implement the problem, and that status name is the reason), plan() builds the descriptors
// and keeps the queried size as workspace_bytes(), run() hands cuDNN exactly that workspace.
// The math type is CUDNN_FMA_MATH (plain fp32) unless CONVLAB_ALLOW_TF32=1, like cuBLAS in
// the cuda.* strategies. Naming across passes: cudnn_names.hpp.
#include <memory>
#include <string>

#include "convlab/numerics.hpp"
#include "cuda/common/settings.hpp"
#include "cudnn_common.hpp"
#include "cudnn_names.hpp"
#include "convlab/registry.hpp"

namespace convlab {
namespace cuda {

// The table in cudnn_names.cpp spells cuDNN 9's values; the header must agree.
static_assert(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED == 7 &&
                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT == 8,
              "cudnnConvolutionFwdAlgo_t differs from cuDNN 9's");
static_assert(CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING == 3 &&
                  CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT == 6,
              "cudnnConvolutionBwdDataAlgo_t differs from cuDNN 9's");
static_assert(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3 == 3 &&
                  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING == 6 &&
                  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT == 7,
              "cudnnConvolutionBwdFilterAlgo_t differs from cuDNN 9's");

namespace {

class CudnnPlan final : public Plan {
 public:
  CudnnPlan(std::string name, const ConvProblem& problem, Pass pass, int algo, Family family,
            const GpuSettings& settings)
      : name_(std::move(name)),
        problem_(problem),
        pass_(pass),
        algo_(algo),
        bound_(cudnn_error_bound(family, problem, pass, settings.allow_tf32)),
        context_(cudnn_context(settings.device)),
        handle_(cudnn_handle(context_)),
        descriptors_(problem, settings.allow_tf32) {
    context_.activate();
    CONVLAB_CUDNN_CHECK(cudnn_workspace_size(handle_, descriptors_, pass_, algo_, &workspace_));
    info_.kernel = cudnn_enum_name(pass_, algo_);
    info_.math_mode = settings.math_mode();
    info_.workspace_split = {{"cudnn", workspace_}};
    info_.details = {
        {"cudnn_math_type", cudnn_math_type_name(cudnn_math_type(settings.allow_tf32))}};
  }
  std::size_t workspace_bytes() const override { return workspace_; }
  ErrorBound error_bound() const override { return bound_; }

 protected:
  void execute(const Tensors& t, const Workspace& workspace, Stream stream) override {
    check_run_arguments(name_, problem_, pass_, t, workspace, workspace_);
    context_.activate();
    cudnn_run(context_, handle_, descriptors_, pass_, algo_, t,
              workspace_ ? workspace.data : nullptr, workspace_, stream);
  }

 private:
  std::string name_;
  ConvProblem problem_;
  Pass pass_;
  int algo_;
  ErrorBound bound_;
  CudaContext& context_;
  cudnnHandle_t handle_;
  CudnnDescriptors descriptors_;
  std::size_t workspace_ = 0;
};

class CudnnAlgorithm final : public Algorithm {
 public:
  explicit CudnnAlgorithm(const CudnnAlgoName& entry) : entry_(entry) {
    info_.name = std::string("cudnn.") + entry_.name;
    info_.device = Device::gpu;
    info_.family = entry_.family;
    info_.backend = "cudnn";
    info_.description =
        std::string("cuDNN legacy algorithm ") + entry_.name + " (" + cudnn_passes_of(entry_) + ")";
    info_.deterministic = entry_.deterministic;
    info_.math_mode = allow_tf32() ? MathMode::tf32 : MathMode::fp32;
    info_.knobs = gpu_knobs(/*uses_cublas=*/false);
  }
  const AlgorithmInfo& info() const override { return info_; }
  Support available() const override { return cudnn_available(); }

  Support supports(const ConvProblem& problem, Pass pass) const override {
    Support fits = cudnn_fits_legacy_api(problem);
    if (!fits) return fits;
    const int algo = cudnn_algo_for(entry_, pass);
    if (algo < 0) {
      return Support::no("cuDNN has no " + std::string(to_string(pass)) + " algorithm " +
                         entry_.name + " (" + name() + " serves " + cudnn_passes_of(entry_) + ")");
    }
    const Support& ready = cudnn_available();
    if (!ready) return ready;
    const GpuSettings settings = gpu_settings(default_knobs(info_));
    CudaContext& context = cudnn_context(settings.device);
    context.activate();
    CudnnDescriptors descriptors(problem, settings.allow_tf32);
    std::size_t bytes = 0;
    const cudnnStatus_t status =
        cudnn_workspace_size(cudnn_handle(context), descriptors, pass, algo, &bytes);
    if (status == CUDNN_STATUS_SUCCESS) return Support::yes();
    // The problem is valid (checked above), so a bad-parameter answer is cuDNN declining
    // this shape for this algorithm, as NOT_SUPPORTED is; both name the status.
    if (cudnn_declines(status)) {
      return Support::no(std::string(cudnnGetErrorString(status)) + ": cuDNN's " +
                         cudnn_enum_name(pass, algo) + " does not implement this problem");
    }
    fail_cudnn(status, "cudnnGet*WorkspaceSize", __FILE__, __LINE__);
  }

  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    problem.validate();
    const GpuSettings settings = gpu_settings(knobs);
    const Support& ready = cudnn_available();
    if (!ready) throw Error(ErrorCode::unavailable, name() + ": " + ready.reason);
    const Support& device = device_support(settings.device);
    if (!device) throw Error(ErrorCode::unavailable, name() + ": " + device.reason);
    const Support support = supports(problem, pass);
    if (!support) {
      throw Error(ErrorCode::unsupported, name() + " " + to_string(pass) + " " +
                                              problem.descriptor() + ": " + support.reason);
    }
    return std::make_unique<CudnnPlan>(name(), problem, pass, cudnn_algo_for(entry_, pass),
                                       entry_.family, settings);
  }

  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    return cudnn_error_bound(entry_.family, problem, pass,
                             gpu_settings(default_knobs(info_)).allow_tf32);
  }
  DeviceContext& context() const override { return cudnn_context(default_device_index()); }
  DeviceContext& plan_context(const KnobValues& knobs) const override {
    return cudnn_context(device_of(info_, knobs));
  }

 private:
  CudnnAlgoName entry_;
  AlgorithmInfo info_;
};

}  // namespace

std::unique_ptr<Algorithm> make_cudnn_find();  // cudnn_find.cpp

}  // namespace cuda

void register_cudnn(Registry& registry) {
  for (const cuda::CudnnAlgoName& entry : cuda::cudnn_algo_names()) {
    registry.add(std::make_unique<cuda::CudnnAlgorithm>(entry));
  }
  registry.add(cuda::make_cudnn_find());
}

}  // namespace convlab
