// Every GPU algorithm (cuda.im2col, cuda.fft, cuda.fft_tiled, cuda.winograd, cudnn.*) against the
// reference over the same corpus and bounds as the CPU algorithms, all three passes; copies go
// through the algorithm's DeviceContext. Without a usable CUDA device every case is skipped with
// the reason (CI has no GPU). cuda.im2col is also exact on integer data under every images setting,
// and deterministic algorithms are checked bitwise run to run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "cuda/im2col/cuda_im2col.hpp"
#include "strategy/fft_geometry.hpp"
#include "strategy/winograd_host.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::check_corpus;
using testing::report_corpus;
using testing::run_seed;

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const Algorithm* a : registry().all()) {
    if (a->device() == Device::gpu) names.push_back(a->name());
  }
  return names;
}

bool is_own_strategy(const std::string& name) { return name.rfind("cuda.", 0) == 0; }

class GpuAlgorithm : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    algorithm_ = &registry().get(GetParam());
    const Support available = algorithm_->available();
    if (!available) GTEST_SKIP() << GetParam() << " not available here: " << available.reason;
  }
  void check(const std::vector<ConvProblem>& problems, const std::string& label, uint64_t seed) {
    const auto summary = check_corpus(*algorithm_, problems, all_passes(), seed);
    EXPECT_TRUE(report_corpus(GetParam(), label, summary, seed));
    // The cuda.* strategies implement every valid problem their math covers; cuDNN's
    // algorithms decline some (each with cuDNN's status as the reason, which check_corpus
    // requires to be non-empty).
    if (is_own_strategy(GetParam())) EXPECT_EQ(summary.unsupported, refusals(problems));
  }
  // What a strategy's family cannot compute: a Winograd strategy covers the stride-1 dense
  // 3x3 layers only (strategy/winograd_host.hpp), every other one every valid problem.
  int refusals(const std::vector<ConvProblem>& problems) const {
    if (algorithm_->info().family != Family::winograd) return 0;
    int count = 0;
    for (const ConvProblem& p : problems) {
      if (!winograd::winograd_shape_support(GetParam(), p)) count += 3;  // every pass
    }
    return count;
  }
  const Algorithm* algorithm_ = nullptr;
};

TEST_P(GpuAlgorithm, EdgeCases) { check(testing::edge_cases(), "edge cases", run_seed()); }

TEST_P(GpuAlgorithm, ScaledSuiteLayers) {
  check(testing::scaled_suite_layers(), "scaled suite layers", run_seed() + 1);
}

TEST_P(GpuAlgorithm, RandomProblems) {
  const uint64_t seed = run_seed() + 2;
  check(testing::random_problems(seed, 300), "300 random problems", seed);
}

// Two runs of one plan on the same inputs give the same bits when the algorithm says it is
// deterministic.
TEST_P(GpuAlgorithm, DeterministicWhenItSaysSo) {
  if (!algorithm_->deterministic()) GTEST_SKIP() << GetParam() << " is not deterministic";
  ConvProblem p;
  p.n = 4, p.c = 16, p.h = 19, p.w = 19, p.k = 24, p.r = 3, p.s = 3, p.pad_h = p.pad_w = 1;
  for (Pass pass : all_passes()) {
    if (!algorithm_->supports(p, pass)) continue;
    auto plan = algorithm_->plan(p, pass);
    const HostTensors host = make_inputs(p, pass, run_seed() + 5);
    CaseBuffers buffers(algorithm_->context(), p, host, plan->workspace_bytes());
    plan->run(buffers.tensors(), buffers.workspace());
    const std::vector<float> first = buffers.download_output(pass);
    buffers.reset_output(pass, host);
    plan->run(buffers.tensors(), buffers.workspace());
    const std::vector<float> second = buffers.download_output(pass);
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0)
        << GetParam() << " " << to_string(pass) << " " << p.descriptor();
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuAlgorithm, ::testing::ValuesIn(gpu_names()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuAlgorithm);

// Small-integer data makes every partial sum exact in fp32 whatever the GEMM's order, so
// cuda.im2col must equal the reference bit for bit under each images-per-buffer setting
// (1, 2, 3 and automatic cut the batch into different chunks, with short last chunks).
TEST(CudaIm2colExact, EveryImagesSettingOnIntegerData) {
  const Support available = registry().get("cuda.im2col").available();
  if (!available) GTEST_SKIP() << "cuda.im2col not available here: " << available.reason;
  const uint64_t seed = run_seed() + 3;
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (ConvProblem p : testing::random_problems(seed, 40)) {
    p.n = 5;
    problems.push_back(p);
  }
  for (int64_t images : {1, 2, 3, 0}) {
    auto algorithm = cuda::make_cuda_im2col(images);
    const auto summary = check_corpus(*algorithm, problems, all_passes(), seed, Fill::integers);
    EXPECT_TRUE(report_corpus("cuda.im2col images=" + std::to_string(images), "integer data, exact",
                              summary, seed));
    EXPECT_EQ(summary.passed, static_cast<int>(problems.size() * 3));
  }
}

// cuda.fft with cache_filters: the second run on the same w and workspace reuses the filter
// spectra, so it is right even with w overwritten by NaN bytes in between (the knob's
// contract says the caller does not do that; here it shows w is not read again); the plan
// info says the filters are cached.
TEST(CudaFftCachedFilters, SecondRunReusesTheSpectra) {
  const Algorithm& a = registry().get("cuda.fft");
  if (!a.available()) GTEST_SKIP() << "cuda.fft not available here: " << a.available().reason;
  const ConvProblem p = testing::problem("mb3ic5ih11oc6kh3ph1");
  const uint64_t seed = run_seed() + 7;
  for (Pass pass : {Pass::forward, Pass::backward_data}) {
    auto plan = a.plan(p, pass, {{"cache_filters", "true"}});
    bool cached = false;
    for (const auto& d : plan->info().details) {
      cached = cached || (d.first == "filter_transform" && d.second.rfind("cached", 0) == 0);
    }
    EXPECT_TRUE(cached) << plan->info().describe();
    const HostTensors host = make_inputs(p, pass, seed);
    CaseBuffers buffers(a.context(), p, host, plan->workspace_bytes());
    plan->run(buffers.tensors(), buffers.workspace());
    buffers.reset_output(pass, host);
    a.context().fill_bytes(buffers.tensors().w, 0xFF, static_cast<std::size_t>(p.w_bytes()));
    plan->run(buffers.tensors(), buffers.workspace());
    const AccuracyReport r = compare_with_reference(p, pass, host, buffers.download_output(pass),
                                                    a.error_bound(p, pass));
    EXPECT_TRUE(r.within_bound && r.nonfinite == 0)
        << to_string(pass) << " " << p.descriptor() << " (seed " << seed << "): " << r.detail;
  }
}

// cuda.fft planned with `knobs` on every edge case and pass, from `seed` on: each against the
// reference, and the plan info names each knob's value (staging and crop under their own
// names, layout as transform_layout, except for a 1 x 1 plane, whose identity transform has
// no layout).
// Returns the reason when the algorithm refuses the knobs on this machine (the fused crop where
// cuFFT cannot link its LTO callback), after checking what ran before the refusal.
std::string check_cuda_fft_knobs(const Algorithm& a, const KnobValues& knobs, uint64_t seed) {
  std::string label;
  for (const auto& [name, value] : knobs) label += name + "=" + value + " ";
  for (const ConvProblem& p : testing::edge_cases()) {
    for (Pass pass : all_passes()) {
      std::unique_ptr<Plan> plan;
      try {
        plan = a.plan(p, pass, knobs);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::unsupported) throw;
        return label + to_string(pass) + " " + p.descriptor() + ": " + e.what();
      }
      const FftGeometry g = fft_geometry(p, pass);
      for (const auto& [name, value] : knobs) {
        const std::string key = name == "layout" ? "transform_layout" : name;
        if (key == "transform_layout" && g.h.size == 1 && g.w.size == 1) continue;
        const auto& details = plan->info().details;
        EXPECT_TRUE(std::any_of(
            details.begin(), details.end(),
            [&](const auto& d) { return d.first == key && d.second.rfind(value, 0) == 0; }))
            << label << plan->info().describe();
      }
      const HostTensors host = make_inputs(p, pass, seed);
      CaseBuffers buffers(a.context(), p, host, plan->workspace_bytes());
      plan->run(buffers.tensors(), buffers.workspace());
      const AccuracyReport r = compare_with_reference(p, pass, host, buffers.download_output(pass),
                                                      a.error_bound(p, pass));
      EXPECT_TRUE(r.within_bound && r.nonfinite == 0)
          << label << to_string(pass) << " " << p.descriptor() << " (seed " << seed
          << "): " << r.detail;
      ++seed;
    }
  }
  return "";
}

// cuda.fft under both values of its staging knob (the registry default is fused, which the
// suites above run).
TEST(CudaFftStagings, EachMatchesTheReference) {
  const Algorithm& a = registry().get("cuda.fft");
  if (!a.available()) GTEST_SKIP() << "cuda.fft not available here: " << a.available().reason;
  for (const std::string staging : {"fused", "separate"}) {
    EXPECT_EQ(check_cuda_fft_knobs(a, {{"staging", staging}}, run_seed() + 9), "");
  }
}

// cuda.fft under the non-default values of its crop and layout knobs (the fused crop's cuFFT
// LTO callback, the contiguous transforms with their transposes), alone and together.
TEST(CudaFftCropAndLayout, EachMatchesTheReference) {
  const Algorithm& a = registry().get("cuda.fft");
  if (!a.available()) GTEST_SKIP() << "cuda.fft not available here: " << a.available().reason;
  const KnobValues variants[] = {{{"crop", "fused"}},
                                 {{"layout", "contiguous"}},
                                 {{"crop", "fused"}, {"layout", "contiguous"}},
                                 {{"crop", "fused"}, {"staging", "separate"}}};
  std::string refused;
  for (const KnobValues& knobs : variants) {
    const std::string reason = check_cuda_fft_knobs(a, knobs, run_seed() + 11);
    if (!reason.empty()) refused += "\n  refused: " + reason;
  }
  if (!refused.empty()) GTEST_SKIP() << "not every variant runs on this machine:" << refused;
}

}  // namespace
}  // namespace convlab
