// cudnn.find: cuDNN's own choice. plan() runs cudnnFind*AlgorithmEx, which times every
// legacy algorithm of the pass on random scratch tensors of the problem's shape, within the
// `workspace` knob's budget (default 1 GiB, lowered to what the device has free); the fastest
// that succeeded in an acceptable math type becomes the plan (cudnn_find_pick.hpp: only
// CUDNN_FMA_MATH, true fp32, unless the allow_tf32 knob is set), and its name, time,
// workspace and math type go into the plan info. Planning allocates (the scratch tensors and
// the trial workspace) and frees everything before it returns; run() is the chosen
// algorithm's plain call.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "convlab/device.hpp"
#include "cuda/common/math_mode.hpp"
#include "cuda/common/random_fill.hpp"
#include "cuda/common/settings.hpp"
#include "convlab/numerics.hpp"
#include "cudnn_find_pick.hpp"
#include "cudnn_common.hpp"
#include "cudnn_names.hpp"

namespace convlab::cuda {
namespace {

constexpr const char* kName = "cudnn.find";

// One cudnnFind*AlgorithmEx call, `find(max, &count, results)`, and the pick among what it
// returns: the same in every pass but for the results' type and the call (named by `call` in
// a failure).
template <typename Perf, typename Find>
FindPick find_and_pick(const char* call, std::size_t budget, bool tf32, const Find& find) {
  constexpr int kMax = 16;
  Perf results[kMax];
  int count = 0;
  CONVLAB_CHECK_STATUS_AS(cudnnStatus_t, CUDNN_STATUS_SUCCESS, fail_cudnn,
                          find(kMax, &count, results), call);
  return pick_find_result(results, count, budget, tf32);
}

FindPick find_best(CudaContext& context, cudnnHandle_t handle, const CudnnDescriptors& d,
                   const ConvProblem& p, Pass pass, std::size_t find_budget, bool tf32) {
  context.activate();
  DeviceBuffer x(context, static_cast<std::size_t>(p.x_bytes()));
  DeviceBuffer w(context, static_cast<std::size_t>(p.w_bytes()));
  DeviceBuffer y(context, static_cast<std::size_t>(p.y_bytes()));
  // Random tensors: timings on zeros are optimistic, and Find picks by timing.
  std::uint64_t seed = 1;
  for (DeviceBuffer* b : {&x, &w, &y}) fill_uniform_bytes(b->data(), b->bytes(), seed++, context.stream());
  // Leave room for cuDNN's own bookkeeping: at most 90% of what is free goes to the trial.
  const MemInfo memory = context.mem_info();
  const std::size_t budget = std::min(find_budget, memory.free / 10 * 9);
  DeviceBuffer workspace(context, budget);
  void* trial = workspace.data();
  switch (pass) {
    case Pass::forward:
      return find_and_pick<cudnnConvolutionFwdAlgoPerf_t>(
          "cudnnFindConvolutionForwardAlgorithmEx", budget, tf32, [&](int max, int* n, auto* r) {
            return cudnnFindConvolutionForwardAlgorithmEx(handle, d.x, x.data(), d.w, w.data(),
                                                          d.conv, d.y, y.data(), max, n, r, trial,
                                                          budget);
          });
    case Pass::backward_data:
      return find_and_pick<cudnnConvolutionBwdDataAlgoPerf_t>(
          "cudnnFindConvolutionBackwardDataAlgorithmEx", budget, tf32,
          [&](int max, int* n, auto* r) {
            return cudnnFindConvolutionBackwardDataAlgorithmEx(handle, d.w, w.data(), d.y, y.data(),
                                                               d.conv, d.x, x.data(), max, n, r,
                                                               trial, budget);
          });
    case Pass::backward_filter:
      return find_and_pick<cudnnConvolutionBwdFilterAlgoPerf_t>(
          "cudnnFindConvolutionBackwardFilterAlgorithmEx", budget, tf32,
          [&](int max, int* n, auto* r) {
            return cudnnFindConvolutionBackwardFilterAlgorithmEx(handle, d.x, x.data(), d.y,
                                                                 y.data(), d.conv, d.w, w.data(),
                                                                 max, n, r, trial, budget);
          });
  }
  return {};
}

class FindPlan final : public Plan {
 public:
  FindPlan(const ConvProblem& problem, Pass pass, const GpuSettings& settings,
           std::size_t find_budget)
      : problem_(problem),
        pass_(pass),
        context_(cudnn_context(settings.device)),
        handle_(cudnn_handle(context_)),
        descriptors_(problem, settings.allow_tf32) {
    choice_ = find_best(context_, handle_, descriptors_, problem, pass, find_budget,
                        settings.allow_tf32);
    if (choice_.algo < 0) {
      throw Error(ErrorCode::unsupported,
                  std::string(kName) + " " + to_string(pass) + " " + problem.descriptor() +
                      ": no algorithm succeeded within the workspace budget of " +
                      std::to_string(choice_.budget) + " bytes in " + math_mode_name() +
                      " math (" + std::to_string(choice_.tried) + " tried, " +
                      std::to_string(choice_.refused_math) +
                      " refused for a math type that may use tensor cores)");
    }
    CONVLAB_CUDNN_CHECK(cudnnSetConvolutionMathType(descriptors_.conv, choice_.math));
    // The size the plain query gives for the pick, in case it differs from Find's figure.
    std::size_t queried = 0;
    CONVLAB_CUDNN_CHECK(cudnn_workspace_size(handle_, descriptors_, pass, choice_.algo, &queried));
    workspace_ = std::max(queried, choice_.workspace);
    char time[32];
    std::snprintf(time, sizeof time, "%.4g", choice_.time_ms);
    info_.kernel = cudnn_enum_name(pass_, choice_.algo);
    // Anything but FMA math may have run on TF32 tensor cores: the row must not claim fp32.
    info_.math_mode = choice_.math == CUDNN_FMA_MATH ? MathMode::fp32 : MathMode::tf32;
    info_.workspace_split = {{"cudnn", workspace_}};
    info_.details = {{"chose", cudnn_registry_name(pass_, choice_.algo)},
                     {"find_ms", time},
                     {"pick_deterministic", choice_.deterministic ? "true" : "false"},
                     {"cudnn_math_type", cudnn_math_type_name(choice_.math)},
                     {"tried", std::to_string(choice_.tried)},
                     {"refused_for_math", std::to_string(choice_.refused_math)},
                     {"budget_bytes", std::to_string(choice_.budget)}};
  }
  std::size_t workspace_bytes() const override { return workspace_; }
  const FindPick& choice() const { return choice_; }
  // The bound of the family of cuDNN's pick, under the math the pick ran in.
  ErrorBound error_bound() const override {
    Family family = Family::direct;
    for (const CudnnAlgoName& entry : cudnn_algo_names()) {
      if (cudnn_algo_for(entry, pass_) == choice_.algo) family = entry.family;
    }
    return cudnn_error_bound(family, problem_, pass_, choice_.math != CUDNN_FMA_MATH);
  }

 protected:
  // cuDNN's call on the caller's stream; the pick was made at plan time (Find times kernels
  // and synchronises, which a graph capture cannot hold).
  void execute(const Tensors& t, const Workspace& workspace, Stream stream) override {
    check_run_arguments(kName, problem_, pass_, t, workspace, workspace_);
    context_.activate();
    cudnn_run(context_, handle_, descriptors_, pass_, choice_.algo, t,
              workspace_ ? workspace.data : nullptr, workspace_, stream);
  }

 private:
  ConvProblem problem_;
  Pass pass_;
  CudaContext& context_;
  cudnnHandle_t handle_;
  CudnnDescriptors descriptors_;
  FindPick choice_;
  std::size_t workspace_ = 0;
};

class FindAlgorithm final : public Algorithm {
 public:
  const AlgorithmInfo& info() const override {
    // The pick may be BWD_*_ALGO_0 or BWD_FILTER_ALGO_3, which use atomics.
    static const AlgorithmInfo kInfo{
        kName, Device::gpu, Family::vendor,
        "cudnn",
        "cuDNN's pick by cudnnFind*AlgorithmEx within the workspace knob "
        "(default 1 GiB); the pick is in the plan info",
        /*deterministic=*/false, allow_tf32() ? MathMode::tf32 : MathMode::fp32, find_knobs()};
    return kInfo;
  }
  Support available() const override { return cudnn_available(); }

  Support supports(const ConvProblem& problem, Pass pass) const override {
    Support fits = cudnn_fits_legacy_api(problem);
    if (!fits) return fits;
    const Support& ready = cudnn_available();
    if (!ready) return ready;
    // Find needs at least one algorithm that implements the problem within the budget.
    const KnobValues knobs = default_knobs(info());
    const GpuSettings settings = gpu_settings(knobs);
    const std::size_t budget = *knob_bytes(knobs, "workspace");
    CudaContext& context = cudnn_context(settings.device);
    context.activate();
    CudnnDescriptors descriptors(problem, settings.allow_tf32);
    for (const CudnnAlgoName& entry : cudnn_algo_names()) {
      const int algo = cudnn_algo_for(entry, pass);
      if (algo < 0) continue;
      std::size_t bytes = 0;
      if (cudnn_workspace_size(cudnn_handle(context), descriptors, pass, algo, &bytes) !=
          CUDNN_STATUS_SUCCESS) {
        continue;
      }
      if (bytes <= budget) return Support::yes();
    }
    return Support::no("no legacy cuDNN " + std::string(to_string(pass)) +
                       " algorithm implements this problem within the workspace knob's " +
                       std::to_string(budget) + " bytes");
  }

  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    problem.validate();
    const GpuSettings settings = gpu_settings(knobs);
    const Support& ready = cudnn_available();
    if (!ready) throw Error(ErrorCode::unavailable, std::string(kName) + ": " + ready.reason);
    const Support& device = device_support(settings.device);
    if (!device) throw Error(ErrorCode::unavailable, std::string(kName) + ": " + device.reason);
    const Support support = supports(problem, pass);
    if (!support) {
      throw Error(ErrorCode::unsupported, std::string(kName) + " " + to_string(pass) + " " +
                                              problem.descriptor() + ": " + support.reason);
    }
    return std::make_unique<FindPlan>(problem, pass, settings, *knob_bytes(knobs, "workspace"));
  }

  // Before planning any family may be picked: the loosest of the normwise bounds (FFT's and
  // Winograd's; which one is looser depends on the problem). A plan's own bound
  // (FindPlan::error_bound) is that of its pick.
  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    const bool tf32 = gpu_settings(default_knobs(info())).allow_tf32;
    const ErrorBound fft = cudnn_error_bound(Family::fft, problem, pass, tf32);
    const ErrorBound winograd = cudnn_error_bound(Family::winograd, problem, pass, tf32);
    return fft.normwise_scale() >= winograd.normwise_scale() ? fft : winograd;
  }
  DeviceContext& context() const override { return cudnn_context(default_device_index()); }
  DeviceContext& plan_context(const KnobValues& knobs) const override {
    return cudnn_context(device_of(info(), knobs));
  }

 private:
  static std::vector<KnobSpec> find_knobs() {
    std::vector<KnobSpec> knobs = gpu_knobs(/*uses_cublas=*/false);
    knobs.push_back(bytes_knob("workspace", std::to_string(std::size_t(1) << 30),
                               /*allow_auto=*/false, "CONVLAB_CUDNN_FIND_WORKSPACE",
                               "the trial workspace cudnnFind* may use (at most 90% of free "
                               "memory), and so the largest workspace a pick may need"));
    return knobs;
  }
};

}  // namespace

// Until plans carry a typed math mode of their own, the one typed way to read it back.
cudnnMathType_t cudnn_find_chosen_math(const Plan& plan) {
  const auto* find = dynamic_cast<const FindPlan*>(&plan);
  if (!find) throw Error(ErrorCode::invalid_argument, "cudnn_find_chosen_math: not a cudnn.find plan");
  return find->choice().math;
}

std::unique_ptr<Algorithm> make_cudnn_find() { return std::make_unique<FindAlgorithm>(); }

}  // namespace convlab::cuda
