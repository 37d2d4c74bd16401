// `convbench compare`'s verdicts, end to end through the runner, the CSV writer and the sweep
// reader, without depending on this machine's timing: a test-only algorithm runs on a device
// context whose clock is scripted (a base time per case times seeded noise, times a slow-down
// factor), so "two runs of the same commit" and "a deliberately slowed algorithm" are exact
// and repeatable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "sweep/cases.hpp"
#include "commands/compare.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/device.hpp"
#include "convlab/registry.hpp"
#include "output/reporters.hpp"
#include "sweep/runner.hpp"

namespace convbench {
namespace {

using convlab::ConvProblem;
using convlab::Pass;

// The host's device, but time_ms answers from a script: base (from the problem's flops, so
// cases differ) x (1 + uniform noise of +-noise) x slow_down.
class ScriptedClock final : public convlab::DeviceContext {
 public:
  ScriptedClock(uint64_t seed, double noise, double slow_down)
      : random_(seed), noise_(-noise, noise), slow_down_(slow_down) {}
  void set_base_ms(double base) { base_ = base; }
  std::string name() const override { return "scripted clock"; }
  void* allocate(std::size_t bytes) override { return host().allocate(bytes); }
  void deallocate(void* p) noexcept override { host().deallocate(p); }
  void copy_to_device(void* d, const void* s, std::size_t n) override {
    host().copy_to_device(d, s, n);
  }
  void copy_to_host(void* d, const void* s, std::size_t n) override {
    host().copy_to_host(d, s, n);
  }
  void fill_bytes(void* d, unsigned char v, std::size_t n) override { host().fill_bytes(d, v, n); }
  void synchronize() override {}
  double time_ms(const std::function<void()>& work) override {
    work();
    return base_ * (1 + noise_(random_)) * slow_down_;
  }

 private:
  static convlab::DeviceContext& host() { return convlab::host_context(); }
  std::mt19937_64 random_;
  std::uniform_real_distribution<double> noise_;
  double slow_down_;
  double base_ = 1;
};

class NothingPlan final : public convlab::Plan {
 public:
  std::size_t workspace_bytes() const override { return 0; }

 protected:
  void execute(const convlab::Tensors&, const convlab::Workspace&, convlab::Stream) override {}
};

class ScriptedAlgorithm final : public convlab::Algorithm {
 public:
  ScriptedAlgorithm(const std::string& name, ScriptedClock& clock) : clock_(clock) {
    info_.name = name;
    info_.family = convlab::Family::direct;
    info_.backend = "test";
    info_.description = "test-only: timed by a scripted clock";
  }
  const convlab::AlgorithmInfo& info() const override { return info_; }
  convlab::Support available() const override { return convlab::Support::yes(); }
  convlab::Support supports(const ConvProblem& p, Pass) const override {
    return p.k % 2 ? convlab::Support::no("scripted: even oc only") : convlab::Support::yes();
  }
  convlab::DeviceContext& context() const override { return clock_; }

 protected:
  std::unique_ptr<convlab::Plan> make_plan(const ConvProblem& p, Pass pass,
                                           const convlab::KnobValues&) const override {
    clock_.set_base_ms(static_cast<double>(p.flops(pass)) * 1e-6);
    return std::make_unique<NothingPlan>();
  }

 private:
  ScriptedClock& clock_;
  convlab::AlgorithmInfo info_;
};

const char* const kLayers[] = {"mb2ic4ih12oc8kh3ph1n\"a\"", "mb2ic8ih9oc8kh5ph2n\"b\"",
                               "mb4ic4ih16oc4kh1n\"c\"", "mb2ic4ih12oc5kh3ph1n\"odd\""};

// One "run of convbench": every layer x pass of both algorithms, written as a CSV and read
// back with the sweep reader. `slow_down` applies to algorithm "test.slowed" only.
SweepFile sweep(const std::string& name, uint64_t seed, double slow_down, int reps,
                bool drop_last = false) {
  ScriptedClock steady(seed, 0.03, 1.0), slowed(seed + 1000, 0.03, slow_down);
  ScriptedAlgorithm kept("test.kept", steady), changed("test.slowed", slowed);
  std::vector<Case> cases;
  for (const char* layer : kLayers) {
    for (Pass pass : {Pass::forward, Pass::backward_data}) {
      for (const convlab::Algorithm* algorithm :
           {static_cast<convlab::Algorithm*>(&kept), static_cast<convlab::Algorithm*>(&changed)}) {
        Case c;
        c.suite = "test";
        c.layer = convlab::parse_descriptor(layer);
        c.pass = pass;
        c.algorithm = algorithm;
        cases.push_back(c);
      }
    }
  }
  if (drop_last) cases.pop_back();
  RunSettings settings;
  settings.reps = reps;
  settings.warmup = 0;
  settings.max_time = 0;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("convbench_compare_" + name + ".csv")).string();
  {
    std::ofstream out(path);
    auto reporter = make_reporter(Format::csv, out, false);
    Context context;
    context["git_commit"] = name;
    reporter->begin(context, cases);
    Summary summary;
    for (const Case& c : cases) {
      const Row row = run_case(c, settings);
      summary.add(row);
      reporter->add(row);
    }
    reporter->end(summary);
  }
  SweepFile file = read_sweep_file(path);
  std::remove(path.c_str());
  return file;
}

int64_t count(const RatioSummary& s, Verdict v) {
  return s.verdicts.count(v) ? s.verdicts.at(v) : 0;
}

TEST(ConvbenchCompare, SeparationPValueIsTheExactRankTestExtreme) {
  EXPECT_DOUBLE_EQ(separation_p_value(5, 5), 2.0 / 252);
  EXPECT_DOUBLE_EQ(separation_p_value(4, 4), 2.0 / 70);
  EXPECT_DOUBLE_EQ(separation_p_value(3, 3), 0.1);
  EXPECT_DOUBLE_EQ(separation_p_value(2, 7), 2.0 / 36);
  EXPECT_DOUBLE_EQ(separation_p_value(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(separation_p_value(0, 5), 1.0);
}

TEST(ConvbenchCompare, RowsCarryTheirCoefficientOfVariation) {
  const SweepFile run = sweep("cv", 7, 1.0, 5);
  const int cv = run.column("cv");
  ASSERT_GE(cv, 0);
  for (size_t i = 0; i < run.rows.size(); ++i) {
    const Row r = row_from_file(run, i);
    if (r.status != Status::ok) continue;
    ASSERT_TRUE(r.cv) << run.key(i);
    // Uniform noise of +-3% has a CV of 0.03/sqrt(3) = 1.7%; five draws scatter around it.
    EXPECT_GT(*r.cv, 0.0);
    EXPECT_LT(*r.cv, 0.035);
  }
}

TEST(ConvbenchCompare, TwoRunsOfTheSameCodeGiveNoVerdict) {
  const Comparison cmp =
      compare_sweeps(sweep("same_a", 1, 1.0, 5), sweep("same_b", 2, 1.0, 5), 0.05);
  EXPECT_EQ(count(cmp.overall, Verdict::slower), 0);
  EXPECT_EQ(count(cmp.overall, Verdict::faster), 0);
  // Layer "odd" is unsupported by both algorithms: 2 passes x 2 algorithms not compared.
  EXPECT_EQ(count(cmp.overall, Verdict::not_compared), 4);
  EXPECT_EQ(cmp.overall.compared, 12);
  EXPECT_EQ(count(cmp.overall, Verdict::within_noise), 12);
  ASSERT_TRUE(cmp.overall.geomean);
  EXPECT_NEAR(*cmp.overall.geomean, 1.0, 0.03);
  for (const CaseComparison& c : cmp.cases) {
    if (c.verdict == Verdict::not_compared) {
      EXPECT_EQ(c.note, "A unsupported");
      EXPECT_FALSE(c.ratio);
    }
  }
}

TEST(ConvbenchCompare, ASlowedAlgorithmIsSlowerAndOnlyIt) {
  const Comparison cmp = compare_sweeps(sweep("base", 1, 1.0, 5), sweep("slow", 2, 1.25, 5), 0.05);
  const RatioSummary& slowed = cmp.by_algorithm.at("test.slowed");
  const RatioSummary& kept = cmp.by_algorithm.at("test.kept");
  EXPECT_EQ(count(slowed, Verdict::slower), 6);
  EXPECT_EQ(count(kept, Verdict::slower) + count(kept, Verdict::faster), 0);
  ASSERT_TRUE(slowed.geomean && kept.geomean);
  EXPECT_NEAR(*slowed.geomean, 1.25, 0.03);
  EXPECT_NEAR(*kept.geomean, 1.0, 0.03);
  for (const CaseComparison& c : cmp.cases) {
    if (c.verdict != Verdict::slower) continue;
    ASSERT_TRUE(c.p_value);
    EXPECT_DOUBLE_EQ(*c.p_value, 2.0 / 252);
  }
  // The same file as B the other way round: faster.
  const Comparison back = compare_sweeps(sweep("slow", 2, 1.25, 5), sweep("base", 1, 1.0, 5), 0.05);
  EXPECT_EQ(count(back.by_algorithm.at("test.slowed"), Verdict::faster), 6);
}

TEST(ConvbenchCompare, TooFewRepetitionsGiveNoVerdictEvenWhenSeparated) {
  const Comparison cmp =
      compare_sweeps(sweep("base3", 1, 1.0, 3), sweep("slow3", 2, 1.25, 3), 0.05);
  const RatioSummary& slowed = cmp.by_algorithm.at("test.slowed");
  EXPECT_EQ(count(slowed, Verdict::slower), 0);
  EXPECT_EQ(count(slowed, Verdict::too_few_reps), 6);
  // A looser alpha accepts 3 and 3 (p = 0.1).
  const Comparison loose =
      compare_sweeps(sweep("base3", 1, 1.0, 3), sweep("slow3", 2, 1.25, 3), 0.2);
  EXPECT_EQ(count(loose.by_algorithm.at("test.slowed"), Verdict::slower), 6);
}

TEST(ConvbenchCompare, CasesInOneFileOnlyAreListedNotCompared) {
  const Comparison cmp =
      compare_sweeps(sweep("full", 1, 1.0, 5), sweep("short", 2, 1.0, 5, /*drop_last=*/true), 0.05);
  ASSERT_FALSE(cmp.cases.empty());
  const CaseComparison& last = cmp.cases.back();
  EXPECT_TRUE(last.a && !last.b);
  EXPECT_EQ(last.note, "only in A");
  EXPECT_EQ(last.verdict, Verdict::not_compared);
}

}  // namespace
}  // namespace convbench
