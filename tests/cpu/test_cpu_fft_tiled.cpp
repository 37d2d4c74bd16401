// cpu.fft_tiled against the reference over the shared corpora, all three passes, under its
// default tiling and under tile and batch knobs that force many tiles, overhanging tiles and
// several batches; the tiling recorded in the plan info; the workspace the geometry's and
// bounded by the tile; bad knob values named; bitwise determinism across thread counts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <vector>

#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cpu/fft_tiled/tiled_plan.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::check_corpus;
using testing::problem;
using testing::report_corpus;
using testing::run_seed;

const Algorithm& tiled() { return registry().get("cpu.fft_tiled"); }

class CpuFftTiled : public ::testing::Test {
 protected:
  // Hundreds of shapes are planned: FFTW_ESTIMATE keeps planning cheap (as cpu.fft's tests).
  void SetUp() override {
    set_num_threads(2);
    if (!std::getenv("CONVLAB_FFTW_PLANNER")) {
      setenv("CONVLAB_FFTW_PLANNER", "estimate", 1);
      unset_ = true;
    }
  }
  void TearDown() override {
    if (unset_) unsetenv("CONVLAB_FFTW_PLANNER");
  }
  bool unset_ = false;
};

// Plans with `knobs`, runs on fresh inputs and compares with the reference under the bound
// of the plan's own tiling (error_bound() states the default tiling's).
AccuracyReport run_with_knobs(const ConvProblem& p, Pass pass, const KnobValues& knobs,
                              uint64_t seed, std::string* tile = nullptr) {
  const Algorithm& algo = tiled();
  auto plan = algo.plan(p, pass, knobs);
  if (tile) *tile = plan->info().tile;
  const HostTensors host = make_inputs(p, pass, seed);
  CaseBuffers buffers(algo.context(), p, host, plan->workspace_bytes());
  plan->run(buffers.tensors(), buffers.workspace());
  const auto& g = static_cast<const cpu_fft_tiled::TiledPlan&>(*plan).geometry();
  return compare_with_reference(p, pass, host, buffers.download_output(pass),
                                cpu_fft_tiled::tiled_error_bound(g));
}

TEST_F(CpuFftTiled, Describes) {
  const AlgorithmInfo& info = tiled().info();
  EXPECT_EQ(info.family, Family::fft_tiled);
  EXPECT_EQ(info.device, Device::cpu);
  EXPECT_TRUE(info.deterministic);
  ASSERT_EQ(info.knobs.size(), 4u);  // the tiling's, then cpu.fft's for its plans of the tiles
  EXPECT_EQ(info.knobs[0].name, "tile");
  EXPECT_EQ(info.knobs[1].name, "batch");
  EXPECT_EQ(info.knobs[2].name, "planner");
  EXPECT_EQ(info.knobs[3].name, "isa");
}

TEST_F(CpuFftTiled, EdgeCases) {
  const uint64_t seed = run_seed();
  const auto summary = check_corpus(tiled(), testing::edge_cases(), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.fft_tiled", "edge cases", summary, seed));
  EXPECT_EQ(summary.unsupported, 0);
}

TEST_F(CpuFftTiled, ScaledSuiteLayers) {
  const uint64_t seed = run_seed();
  const auto summary = check_corpus(tiled(), testing::scaled_suite_layers(), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.fft_tiled", "suite layers", summary, seed));
  EXPECT_EQ(summary.unsupported, 0);
}

TEST_F(CpuFftTiled, RandomProblems) {
  const uint64_t seed = run_seed();
  const auto summary =
      check_corpus(tiled(), testing::random_problems(seed, 200), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.fft_tiled", "random problems", summary, seed));
  EXPECT_EQ(summary.unsupported, 0);
}

// Small tiles and batches: many tiles per image, the last one hanging over the edge, patches
// overlapping (backward-data's overlap-add), several batches and a short last one
// (backward-filter's partial sums).
TEST_F(CpuFftTiled, ForcedTilesAndBatchesMatchTheReference) {
  const uint64_t seed = run_seed();
  int checked = 0;
  double worst = 0;  // the largest error / bound seen: the bound's margin on this corpus
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::random_problems(seed ^ 0x7117, 60)) problems.push_back(p);
  for (const ConvProblem& p : problems) {
    for (Pass pass : all_passes()) {
      std::vector<KnobValues> variants = {{{"tile", "2"}, {"batch", "3"}}, {{"tile", "5"}}};
      // One pair per batch and per output: only where that stays a few hundred FFT runs.
      if (p.n * p.out_h() * p.out_w() <= 300) variants.push_back({{"tile", "1"}, {"batch", "1"}});
      for (const KnobValues& knobs : variants) {
        const AccuracyReport r = run_with_knobs(p, pass, knobs, seed + checked);
        EXPECT_TRUE(r.within_bound) << p.descriptor() << " " << to_string(pass) << " "
                                    << format_knobs(knobs) << " seed " << seed << ": " << r.detail;
        EXPECT_EQ(r.nonfinite, 0);
        worst = r.worst_ratio > worst ? r.worst_ratio : worst;
        ++checked;
      }
    }
  }
  std::cout << "cpu.fft_tiled: " << checked << " cases with forced tiles, worst error/bound "
            << worst << " (seed " << seed << ")\n";
}

TEST_F(CpuFftTiled, PlanInfoRecordsTheTiling) {
  const ConvProblem p = problem("mb2ic3ih40oc4kh5ph2");  // 40 outputs per axis
  std::string tile;
  run_with_knobs(p, Pass::forward, {{"tile", "7"}}, run_seed(), &tile);
  EXPECT_EQ(tile, "7x7");
  auto plan = tiled().plan(p, Pass::forward);
  // Default: patch 20 (even smooth >= 4 * 5), tile <= 16; 40 outputs -> 3 x 3 tiles of 14,
  // patch 18.
  EXPECT_EQ(plan->info().tile, "14x14");
  EXPECT_EQ(plan->info().transform, "fft 18x18");
  EXPECT_EQ(plan->info().knobs.at("tile"), "auto");
  bool tiles = false;
  for (const auto& d : plan->info().details) tiles |= d.first == "tiles" && d.second == "3x3";
  EXPECT_TRUE(tiles) << plan->notes();
  // A tile larger than the output is capped by it: one tile, the whole image.
  run_with_knobs(p, Pass::forward, {{"tile", "1000"}}, run_seed(), &tile);
  EXPECT_EQ(tile, "40x40");
  // ... which keeps the problem's padding, so the transform is cpu.fft's, not larger.
  EXPECT_EQ(tiled().plan(p, Pass::forward, {{"tile", "1000"}})->info().transform,
            registry().get("cpu.fft").plan(p, Pass::forward)->info().transform);
}

TEST_F(CpuFftTiled, WorkspaceIsTheGeometrysAndBoundedByTheTile) {
  for (Pass pass : all_passes()) {
    std::size_t bytes[2];
    int i = 0;
    for (const char* d : {"mb4ic8ih48oc8kh5ph2", "mb4ic8ih480oc8kh5ph2"}) {
      const ConvProblem p = problem(d);
      auto plan = tiled().plan(p, pass, {{"batch", "8"}});
      const auto& g = static_cast<const cpu_fft_tiled::TiledPlan&>(*plan).geometry();
      EXPECT_EQ(plan->workspace_bytes(), static_cast<std::size_t>(g.total_bytes));
      std::size_t split = 0;
      for (const auto& part : plan->info().workspace_split) split += part.second;
      EXPECT_EQ(split, plan->workspace_bytes());
      bytes[i++] = plan->workspace_bytes();
    }
    // 100x the pixels, the same workspace (the dw partial of several batches aside).
    EXPECT_EQ(bytes[0], bytes[1]) << to_string(pass);
    const std::size_t untiled =
        registry().get("cpu.fft").plan(problem("mb4ic8ih480oc8kh5ph2"), pass)->workspace_bytes();
    EXPECT_LT(bytes[1] * 20, untiled) << to_string(pass);
  }
}

TEST_F(CpuFftTiled, BadKnobValuesAreNamed) {
  const ConvProblem p = problem("mb2ic3ih9oc4kh3");
  for (const KnobValues& knobs :
       {KnobValues{{"tile", "0"}}, KnobValues{{"batch", "-2"}}, KnobValues{{"tile", "big"}}}) {
    try {
      tiled().plan(p, Pass::forward, knobs);
      FAIL() << format_knobs(knobs);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(knobs.begin()->first), std::string::npos) << e.what();
    }
  }
}

TEST_F(CpuFftTiled, BitwiseIdenticalAcrossThreadCounts) {
  const ConvProblem p = problem("mb3ic5ih23iw19oc6kh4kw3ph1");
  const uint64_t seed = run_seed();
  for (Pass pass : all_passes()) {
    std::vector<float> out[2];
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      auto plan = tiled().plan(p, pass, {{"tile", "4"}, {"batch", "5"}});
      const HostTensors host = make_inputs(p, pass, seed);
      CaseBuffers buffers(tiled().context(), p, host, plan->workspace_bytes());
      plan->run(buffers.tensors(), buffers.workspace());
      out[threads - 1] = buffers.download_output(pass);
    }
    EXPECT_EQ(out[0], out[1]) << to_string(pass) << " seed " << seed;
  }
}

}  // namespace
}  // namespace convlab
