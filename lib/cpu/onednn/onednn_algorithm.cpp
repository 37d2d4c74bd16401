// Registers cpu.onednn (oneDNN's own choice), cpu.onednn.direct and cpu.onednn.winograd, the
// CPU vendor baselines. The math, layouts, workspace and threading
// are derived in onednn_plan.cpp; this file holds what the registry asks of an algorithm.
//
// Error bound. oneDNN's direct kernels (jit, brgemm, gemm-based) compute each output as an
// fp32 sum of the same products as the reference, only in another order (blocked over
// channels, FMA, several partial sums): the elementwise bound |e_i| <= f eps sum|a||b| of
// accuracy.hpp applies. The rigorous worst case of an fp32 sum of m products is about
// m eps sum|a||b|, but with rounding errors of random sign (zero-mean data, as the tests and
// convbench --check use) the observed error stays within a few eps sum|a||b| for any m:
// measured at most 6.1 eps sum|a||b| over 31 seeds x 340 problems x 3 passes, and 0.5-4.9
// on full-size layers (m up to 4,608). kDirectFactor = 12 leaves a factor 2 over the worst.
// Winograd (oneDNN's auto picks jit_wino_4x3:avx512_core for 3x3, stride 1, dense, with 64+
// channels: at mb >= 16 forward and backward-data, at any mb backward-weights with many
// channels, e.g. mb2ic512ih14oc512kh3ph1) computes F(4x4, 3x3) tiles through input, filter and
// output transforms whose coefficients reach 1/24 and 8 (points 0, +-1, +-2): an output's error
// then depends on every input of its 6x6 tile, not only on its own receptive field, so no
// elementwise bound of sum|a||b| holds (an output whose own products are all zero can still carry
// rounding error). Such plans get the normwise bound instead, per output plane
// ||e_p||_2 <= f eps sum ||a||_2 ||b||_2 (log2 term 1): a tile's error is bounded by its
// inputs' norm times the filter's (the transforms are fixed linear maps), each input sits in
// at most 4 tiles, and the triangle inequality sums the channels. Measured f: 1.1-3.1 forward
// and backward-data; backward-weights, whose tiles of small images are mostly padding, up to
// 9.7 (mb2ic512ih6oc128kh3ph1, 12 seeds). kWinogradFactor = 64 leaves a factor 6.6.
// (Elementwise, the same runs show 6-26 eps sum|a||b|.)
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cpu/isa.hpp"
#include "onednn_plan.hpp"

namespace convlab {
namespace {

constexpr double kDirectFactor = 12.0;
constexpr double kWinogradFactor = 64.0;

// ResNet-50's 14x14 3x3 layer at batch 16: Winograd's and the direct kernels' home ground.
constexpr const char* kProbeLayer = "mb16ic256ih14oc256kh3ph1";

// oneDNN's refusal of `algorithm` on kProbeLayer forward, or "" where it has a kernel.
std::string probe(dnnl::algorithm algorithm) {
  try {
    onednn::ThreadScope scope(num_threads());
    onednn::convolution_descriptor(parse_descriptor(kProbeLayer).problem, Pass::forward, algorithm);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// One registry entry per oneDNN convolution algorithm: convolution_auto (oneDNN's own
// choice, family vendor), convolution_direct and convolution_winograd, so that every convlab
// strategy has its vendor counterpart in the same run. Where oneDNN has no implementation of
// the algorithm for the problem on this CPU (its Winograd needs AVX-512 and a 3x3 stride-1
// layer), supports() says no with oneDNN's status; where it has none for the layer it is made
// for either (a CPU without AVX-512), the algorithm is not available() at all, with that status.
class OnednnAlgorithm final : public Algorithm {
 public:
  OnednnAlgorithm(const char* name, Family family, dnnl::algorithm algorithm)
      : algorithm_(algorithm) {
    const dnnl_version_t* v = dnnl_version();
    const std::string version =
        std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    // oneDNN's CPU convolutions split work statically over a fixed thread count and reduce
    // partial sums (backward-weights over the batch) in a fixed order; measured bitwise
    // identical over repeated runs (tests/cpu/test_determinism.cpp).
    info_ = AlgorithmInfo{name,
                          Device::cpu,
                          family,
                          "onednn " + version,
                          "oneDNN " + version + " convolution primitive (" +
                              onednn::algorithm_name(algorithm) +
                              ", oneDNN's preferred layouts, reorders from/to NCHW inside run)",
                          /*deterministic=*/true,
                          MathMode::fp32,
                          /*knobs=*/{}};
  }

  const AlgorithmInfo& info() const override { return info_; }

  Support available() const override {
    if (algorithm_ == dnnl::algorithm::convolution_auto) return Support::yes();
    // One probe per process (the CPU does not change): a layer oneDNN's kernels of every
    // algorithm are written for, forward.
    static const std::string direct = probe(dnnl::algorithm::convolution_direct);
    static const std::string winograd = probe(dnnl::algorithm::convolution_winograd);
    const std::string& refusal =
        algorithm_ == dnnl::algorithm::convolution_winograd ? winograd : direct;
    if (refusal.empty()) return Support::yes();
    return Support::no(
        name() + ": oneDNN has no " + onednn::algorithm_name(algorithm_) +
        " kernel on this CPU (widest vector instructions: " + to_string(cpu_isa("auto", "isa")) +
        "), not even for " + kProbeLayer + " forward: " + refusal);
  }

  Support supports(const ConvProblem& problem, Pass pass) const override {
    problem.validate();
    // oneDNN's jit kernels keep offsets and loop counts in 32-bit ints.
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    if (problem.x_elems() > kMax || problem.y_elems() > kMax || problem.w_elems() > kMax) {
      return Support::no("oneDNN 2.6 CPU kernels index with 32-bit ints; " + problem.descriptor() +
                         " has a tensor of more than 2^31-1 elements");
    }
    try {
      onednn::ThreadScope scope(num_threads());
      onednn::convolution_descriptor(problem, pass, algorithm_);
    } catch (const Error& e) {
      return Support::no(e.what());
    }
    return Support::yes();
  }

  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues&) const override {
    const Support usable = available();
    if (!usable) throw Error(ErrorCode::unavailable, usable.reason);
    const Support support = supports(problem, pass);
    if (!support) {
      throw Error(ErrorCode::unsupported, name() + " " + std::string(to_string(pass)) + " " +
                                              problem.descriptor() + ": " + support.reason);
    }
    return onednn::make_plan(problem, pass, algorithm_, name());
  }

  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    bool winograd = algorithm_ == dnnl::algorithm::convolution_winograd;
    if (!winograd && algorithm_ == dnnl::algorithm::convolution_auto) {
      try {
        onednn::ThreadScope scope(num_threads());
        winograd = onednn::is_winograd(onednn::convolution_descriptor(problem, pass, algorithm_));
      } catch (const Error&) {
        // No descriptor, no plan: the direct bound is as good as any for a case never run.
      }
    }
    if (winograd) return {ErrorBound::Kind::normwise, kWinogradFactor, 0.0};
    return {ErrorBound::Kind::elementwise, kDirectFactor, 0.0};
  }

  DeviceContext& context() const override { return host_context(); }

 private:
  dnnl::algorithm algorithm_;
  AlgorithmInfo info_;
};

}  // namespace

void register_cpu_onednn(Registry& registry) {
  registry.add(std::make_unique<OnednnAlgorithm>("cpu.onednn", Family::vendor,
                                                 dnnl::algorithm::convolution_auto));
  registry.add(std::make_unique<OnednnAlgorithm>("cpu.onednn.direct", Family::direct,
                                                 dnnl::algorithm::convolution_direct));
  registry.add(std::make_unique<OnednnAlgorithm>("cpu.onednn.winograd", Family::winograd,
                                                 dnnl::algorithm::convolution_winograd));
}

}  // namespace convlab
