// cpu.onednn against the reference over the corpus, all three passes; bit-exact on integer
// data wherever oneDNN computes directly; its Winograd plans within their normwise bound; its
// plan facts (threads, layouts, primitive time) reported; bad arguments refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "convlab/descriptor.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::check_case;
using testing::check_corpus;
using testing::Disposition;
using testing::edge_cases;
using testing::random_problems;
using testing::report_corpus;
using testing::run_seed;

const Algorithm& algorithm() { return registry().get("cpu.onednn"); }

class CpuOnednn : public ::testing::Test {
 protected:
  void SetUp() override {
    CONVLAB_SKIP_UNLESS_BUILT("cpu.onednn");
    set_num_threads(2);
  }
};

TEST_F(CpuOnednn, Registered) {
  const Algorithm& a = algorithm();
  EXPECT_EQ(a.device(), Device::cpu);
  EXPECT_TRUE(a.deterministic());
#ifdef CONVLAB_FOUND_ONEDNN_VERSION
  // The description names the oneDNN loaded at run time; it must be the one CMake found.
  const std::string found = CONVLAB_FOUND_ONEDNN_VERSION;
  EXPECT_NE(a.description().find("oneDNN " + found), std::string::npos)
      << a.description() << " (built against oneDNN " << found << ")";
#endif
}

TEST_F(CpuOnednn, EdgeCases) {
  const auto summary = check_corpus(algorithm(), edge_cases(), all_passes(), run_seed());
  EXPECT_TRUE(report_corpus("cpu.onednn", "edge cases", summary, run_seed()));
  EXPECT_EQ(summary.unsupported, 0);  // oneDNN has a (reference) implementation for all
  EXPECT_GE(summary.passed, 30 * 3);
}

TEST_F(CpuOnednn, ScaledSuiteLayers) {
  const auto layers = testing::scaled_suite_layers();
  std::cout << "cpu.onednn: " << layers.size() << " scaled suite layers from bench/suites\n";
  const auto summary = check_corpus(algorithm(), layers, all_passes(), run_seed() + 1);
  EXPECT_TRUE(report_corpus("cpu.onednn", "scaled suite layers", summary, run_seed() + 1));
  EXPECT_EQ(summary.passed, static_cast<int>(layers.size() * 3));
}

TEST_F(CpuOnednn, RandomProblems) {
  const uint64_t seed = run_seed() + 2;
  const auto summary = check_corpus(algorithm(), random_problems(seed, 300), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.onednn", "300 random problems", summary, seed));
  EXPECT_EQ(summary.passed, 900);
}

// Small-integer data makes every partial sum exact in fp32 whatever the summation order, so
// a direct implementation must equal the reference bit for bit. Winograd's transforms
// (coefficients like 1/6, 1/24) are not exact on integers; none of the edge cases (all have
// mb <= 4) gets a Winograd plan, which the loop asserts, so the check covers all of them.
TEST_F(CpuOnednn, IntegerDataIsExactOnEdgeCases) {
  const uint64_t seed = run_seed() + 3;
  for (const ConvProblem& p : edge_cases()) {
    for (Pass pass : all_passes()) {
      EXPECT_EQ(algorithm().error_bound(p, pass).kind, ErrorBound::Kind::elementwise)
          << p.descriptor() << " " << to_string(pass) << " got a Winograd plan";
    }
  }
  const auto summary = check_corpus(algorithm(), edge_cases(), all_passes(), seed, Fill::integers);
  EXPECT_TRUE(report_corpus("cpu.onednn", "integer data, exact", summary, seed));
  EXPECT_EQ(summary.passed, static_cast<int>(edge_cases().size() * 3));
}

// oneDNN's convolution_auto picks Winograd F(4x4,3x3) on AVX-512 for 3x3, stride 1, dense,
// with 64+ channels (mb >= 16 forward and backward-data; backward-weights with many channels).
// Those plans carry the normwise bound (see onednn_algorithm.cpp) and must keep it; the bound kind
// must follow the plan's kernel.
TEST_F(CpuOnednn, WinogradPlansKeepTheirBound) {
  // Winograd forward and backward-data; and backward-weights (at mb 4, many channels).
  const char* const layers[] = {"mb16ic64ih14oc64kh3ph1", "mb16ic96ih9iw17oc64kh3kw3ph1pw1",
                                "mb4ic256ih6oc256kh3ph1"};
  int winograd = 0;
  uint64_t seed = run_seed() + 4;
  for (const char* descriptor : layers) {
    const ConvProblem p = parse_descriptor(descriptor).problem;
    for (Pass pass : all_passes()) {
      const auto plan = algorithm().plan(p, pass);
      // The kernel oneDNN names (its impl_info_str, e.g. "brgconv:..." or "jit_wino_4x3:...").
      const bool wino = plan->info().kernel.find("wino") != std::string::npos;
      winograd += wino;
      const ErrorBound bound = plan->error_bound();
      EXPECT_EQ(bound.kind == ErrorBound::Kind::normwise, wino) << descriptor;
      const auto outcome = check_case(algorithm(), p, pass, seed++);
      EXPECT_EQ(outcome.disposition, Disposition::passed) << outcome.message;
      std::cout << "cpu.onednn " << descriptor << " " << to_string(pass) << ": "
                << (wino ? "winograd" : "direct") << ", error/bound " << outcome.report.worst_ratio
                << "\n";
    }
  }
  if (winograd == 0) GTEST_SKIP() << "oneDNN picked no Winograd kernel on this CPU";
}

TEST_F(CpuOnednn, PlanInfoTellsImplementationThreadsAndPhaseTimes) {
  const ConvProblem p = parse_descriptor("mb2ic16ih12oc16kh3ph1").problem;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    auto plan = algorithm().plan(p, Pass::forward);
    const PlanInfo& info = plan->info();
    EXPECT_FALSE(info.kernel.empty()) << plan->notes();
    bool threads_recorded = false;
    for (const auto& [name, value] : info.details) {
      threads_recorded = threads_recorded || (name == "threads" && value == std::to_string(threads));
    }
    EXPECT_TRUE(threads_recorded) << plan->notes();
    std::size_t split = 0;
    for (const auto& part : info.workspace_split) split += part.second;
    EXPECT_LE(split, plan->workspace_bytes()) << plan->notes();
    EXPECT_TRUE(plan->last_run_phases().empty());
    const HostTensors host = make_inputs(p, Pass::forward, 5);
    CaseBuffers buffers(algorithm().context(), p, host, plan->workspace_bytes());
    plan->run(buffers.tensors(), buffers.workspace());
    const auto phases = plan->last_run_phases();
    ASSERT_EQ(phases.size(), 2u);
    EXPECT_EQ(phases[0].first, "primitive");
    EXPECT_GT(phases[0].second, 0.0);
    EXPECT_GE(phases[1].second, 0.0);
  }
}

TEST_F(CpuOnednn, RefusesBadRunArguments) {
  const ConvProblem p = parse_descriptor("mb2ic16ih12oc16kh3ph1").problem;
  auto plan = algorithm().plan(p, Pass::backward_filter);
  ASSERT_GT(plan->workspace_bytes(), 0u);  // reorder copies at least (oneDNN's blocked layout)
  const HostTensors host = make_inputs(p, Pass::backward_filter, 6);
  CaseBuffers buffers(algorithm().context(), p, host, plan->workspace_bytes());
  Workspace small = buffers.workspace();
  small.bytes -= 1;
  try {
    plan->run(buffers.tensors(), small);
    FAIL() << "a workspace one byte short was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(std::to_string(plan->workspace_bytes())),
              std::string::npos)
        << e.what();
  }
  Tensors missing = buffers.tensors();
  missing.y = nullptr;
  EXPECT_THROW(plan->run(missing, buffers.workspace()), Error);
}

TEST_F(CpuOnednn, SaysNoToTensorsPastInt32) {
  ConvProblem p = parse_descriptor("mb1ic1ih50000oc1kh1").problem;  // 2.5e9 input elements
  const Support s = algorithm().supports(p, Pass::forward);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("32-bit"), std::string::npos) << s.reason;
  try {
    algorithm().plan(p, Pass::forward);
    FAIL() << "planned an unsupported problem";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
  }
}

// One registry entry per oneDNN algorithm: convolution_direct implements every valid problem
// (its reference kernel is the fallback) and passes the corpus with the direct bound;
// convolution_winograd passes wherever oneDNN implements it and otherwise says why, with
// oneDNN's status. Every plan names the implementation oneDNN reports.
TEST_F(CpuOnednn, PerAlgorithmEntries) {
  const Algorithm& direct = registry().get("cpu.onednn.direct");
  const Algorithm& winograd = registry().get("cpu.onednn.winograd");
  EXPECT_EQ(direct.info().family, Family::direct);
  EXPECT_EQ(winograd.info().family, Family::winograd);
  EXPECT_EQ(algorithm().info().family, Family::vendor);
  const uint64_t seed = run_seed() + 9;
  const auto d = check_corpus(direct, edge_cases(), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.onednn.direct", "edge cases", d, seed));
  EXPECT_EQ(d.unsupported, 0);
  std::vector<ConvProblem> problems = edge_cases();
  problems.push_back(parse_descriptor("mb16ic64ih14oc64kh3ph1").problem);
  const auto w = check_corpus(winograd, problems, all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.onednn.winograd", "edge cases + a 3x3 layer", w, seed));
  for (const std::string& reason : w.unsupported_reasons) {
    EXPECT_NE(reason.find("unimplemented"), std::string::npos) << reason;
  }
  const ConvProblem layer = parse_descriptor("mb16ic64ih14oc64kh3ph1").problem;
  for (Pass pass : all_passes()) {
    EXPECT_FALSE(direct.plan(layer, pass)->info().kernel.empty());
    if (winograd.supports(layer, pass)) {
      const std::string kernel = winograd.plan(layer, pass)->info().kernel;
      EXPECT_NE(kernel.find("wino"), std::string::npos) << kernel;
      EXPECT_EQ(winograd.error_bound(layer, pass).kind, ErrorBound::Kind::normwise);
    }
  }
  if (w.passed == 0) GTEST_SKIP() << "oneDNN implements no Winograd kernel on this CPU";
}

}  // namespace
}  // namespace convlab
