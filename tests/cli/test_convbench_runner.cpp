// convbench's runner, reporters and suites driven directly, with test-only algorithms for the
// dispositions no real backend produces on purpose: an output outside its error bound, an
// unwritten output, a plan that throws, a budget refusal. The command-line behaviour is
// tested by test_convbench_cli.py, which runs the binary as a user would.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

#include "convlab/descriptor.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "options/cli.hpp"
#include "options/knob_flags.hpp"
#include "output/reporters.hpp"
#include "output/results_file.hpp"
#include "output/row.hpp"
#include "sweep/cases.hpp"
#include "sweep/inputs.hpp"
#include "sweep/runner.hpp"
#include "sweep/suites.hpp"
#include "sweep/workers.hpp"

namespace convbench {
namespace {

using convlab::ConvProblem;
using convlab::Pass;

// What the fake algorithm's run does to the output.
enum class Behaviour {
  exact,        // the reference's answer
  off_by_one,   // every output element + 1: far outside any fp32 bound
  one_wrong,    // the middle output element + 0.01, the rest exact
  leave_unset,  // writes nothing: the poisoned NaNs stay
  sleep_20ms,   // exact, after sleeping (for the repetition cap)
  throw_in_plan,
  refuse_in_plan,  // supports() says yes, plan() finds it cannot (a library refuses at plan time)
  over_budget,
  unsupported,
  unavailable,
  drop_nan,  // the reference's answer with every NaN replaced by 0 (propagation lost)
  flip_inf,  // the reference's answer with every infinity negated
  logged,    // exact, and its tag appended to run_log at every run
  throw_in_run,  // plans, then throws from its second run on (the warm-up runs once)
};

// The tags of the `logged` fakes' runs, in the order they ran.
std::vector<std::string> run_log;

int64_t output_elements(const ConvProblem& p, Pass pass) {
  return pass == Pass::forward         ? p.y_elems()
         : pass == Pass::backward_data ? p.x_elems()
                                       : p.w_elems();
}

class FakePlan final : public convlab::Plan {
 public:
  FakePlan(const ConvProblem& p, Pass pass, Behaviour b, std::string tag)
      : problem_(p), pass_(pass), b_(b), tag_(std::move(tag)) {}
  std::size_t workspace_bytes() const override { return 256; }

 protected:
  void execute(const convlab::Tensors& t, const convlab::Workspace& ws, convlab::Stream) override {
    convlab::check_run_arguments("fake", problem_, pass_, t, ws, 256);
    if (b_ == Behaviour::leave_unset) return;
    if (b_ == Behaviour::logged) run_log.push_back(tag_);
    if (b_ == Behaviour::throw_in_run && ++runs_ > 1) {
      throw convlab::Error(convlab::ErrorCode::backend, "fake run: FAKE_LAUNCH_FAILURE");
    }
    if (b_ == Behaviour::sleep_20ms) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // The reference itself, through the registry, so the fake's exact answer is the
    // reference's (bitwise).
    static const auto& reference = convlab::registry().get("reference");
    auto plan = reference.plan(problem_, pass_);
    plan->run(t, {});
    float* out = pass_ == Pass::forward ? t.y : pass_ == Pass::backward_data ? t.x : t.w;
    const int64_t n = pass_ == Pass::forward         ? problem_.y_elems()
                      : pass_ == Pass::backward_data ? problem_.x_elems()
                                                     : problem_.w_elems();
    for (int64_t i = 0; i < n; ++i) {
      if (b_ == Behaviour::off_by_one) out[i] += 1.0f;
      if (b_ == Behaviour::drop_nan && std::isnan(out[i])) out[i] = 0.0f;
      if (b_ == Behaviour::flip_inf && std::isinf(out[i])) out[i] = -out[i];
    }
    if (b_ == Behaviour::one_wrong) {
      float* out = pass_ == Pass::forward ? t.y : pass_ == Pass::backward_data ? t.x : t.w;
      out[output_elements(problem_, pass_) / 2] += 0.01f;
    }
  }

 private:
  ConvProblem problem_;
  Pass pass_;
  Behaviour b_;
  std::string tag_;
  int runs_ = 0;
};

class FakeAlgorithm final : public convlab::Algorithm {
 public:
  explicit FakeAlgorithm(Behaviour b, std::string tag = "") : b_(b), tag_(std::move(tag)) {
    info_.name = "test.fake";
    info_.family = convlab::Family::direct;
    info_.backend = "test";
    info_.description = "test-only";
  }
  const convlab::AlgorithmInfo& info() const override { return info_; }
  convlab::Support available() const override {
    return b_ == Behaviour::unavailable ? convlab::Support::no("no fake device here")
                                        : convlab::Support::yes();
  }
  convlab::Support supports(const ConvProblem& p, Pass) const override {
    p.validate();
    return b_ == Behaviour::unsupported ? convlab::Support::no("fake: odd kernels only")
                                        : convlab::Support::yes();
  }
  convlab::DeviceContext& context() const override { return convlab::host_context(); }

 protected:
  std::unique_ptr<convlab::Plan> make_plan(const ConvProblem& p, Pass pass,
                                           const convlab::KnobValues&) const override {
    if (b_ == Behaviour::throw_in_plan) {
      throw convlab::Error(convlab::ErrorCode::backend, "fake plan: FAKE_STATUS_INTERNAL_ERROR");
    }
    if (b_ == Behaviour::over_budget) {
      throw convlab::Error(convlab::ErrorCode::over_budget, "fake: 3 GiB over a 1 GiB budget");
    }
    if (b_ == Behaviour::refuse_in_plan) {
      throw convlab::Error(convlab::ErrorCode::unsupported, "fake: the library cannot link here");
    }
    return std::make_unique<FakePlan>(p, pass, b_, tag_);
  }

 private:
  Behaviour b_;
  std::string tag_;
  convlab::AlgorithmInfo info_;
};

Case make_case(const convlab::Algorithm& algorithm, Pass pass = Pass::forward,
               const std::string& descriptor = "mb2ic3ih9oc4kh3ph1") {
  Case c;
  c.suite = "test";
  c.layer = convlab::parse_descriptor(descriptor);
  c.pass = pass;
  c.algorithm = &algorithm;
  return c;
}

RunSettings quick(bool check) {
  RunSettings s;
  s.reps = 3;
  s.warmup = 1;
  s.check = check;
  return s;
}

TEST(ConvbenchRunner, ExactAlgorithmIsOkWithZeroErrorUnderCheck) {
  FakeAlgorithm fake(Behaviour::exact);
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    const Row row = run_case(make_case(fake, pass), quick(true));
    EXPECT_EQ(row.status, Status::ok) << row.reason;
    EXPECT_TRUE(row.reason.empty());
    ASSERT_TRUE(row.max_abs_err && row.max_rel_err);
    EXPECT_EQ(*row.max_abs_err, 0.0);
    EXPECT_EQ(row.reps, 3);
    EXPECT_EQ(row.workspace_bytes, 256);
    const ConvProblem p = make_case(fake, pass).layer.problem;
    EXPECT_EQ(row.total_bytes, p.x_bytes() + p.w_bytes() + p.y_bytes() + 256);
    ASSERT_TRUE(row.time_ms && row.time_ms_min && row.time_ms_max && row.plan_ms);
    EXPECT_LE(*row.time_ms_min, *row.time_ms);
    EXPECT_LE(*row.time_ms, *row.time_ms_max);
  }
}

TEST(ConvbenchRunner, OutputOutsideItsBoundIsAnAccuracyError) {
  FakeAlgorithm fake(Behaviour::off_by_one);
  const Row checked = run_case(make_case(fake, Pass::backward_filter), quick(true));
  EXPECT_EQ(checked.status, Status::error);
  EXPECT_EQ(checked.reason.rfind("accuracy: ", 0), 0u) << checked.reason;
  ASSERT_TRUE(checked.max_abs_err);
  EXPECT_NEAR(*checked.max_abs_err, 1.0, 1e-3);
  EXPECT_TRUE(checked.time_ms.has_value());  // the timing is kept beside the failure
  // Without --check nobody looks: the same run is ok and carries no error columns.
  const Row unchecked = run_case(make_case(fake, Pass::backward_filter), quick(false));
  EXPECT_EQ(unchecked.status, Status::ok);
  EXPECT_FALSE(unchecked.max_abs_err.has_value());
}

TEST(ConvbenchRunner, SampledCheckCatchesOneWrongElementItSamples) {
  FakeAlgorithm fake(Behaviour::one_wrong);
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    const Case c = make_case(fake, pass);
    RunSettings settings = quick(true);
    // As many samples as outputs: the wrong one is among them whatever the seed.
    settings.check_scope = convlab::parse_check_scope(
        "sampled:" + std::to_string(output_elements(c.layer.problem, pass)));
    const Row row = run_case(c, settings);
    EXPECT_EQ(row.status, Status::error) << to_string(pass);
    EXPECT_EQ(row.reason.rfind("accuracy: sampled ", 0), 0u) << row.reason;
    ASSERT_TRUE(row.max_abs_err);
    EXPECT_NEAR(*row.max_abs_err, 0.01, 1e-4);
  }
}

TEST(ConvbenchRunner, UnwrittenOutputFailsTheCheck) {
  FakeAlgorithm fake(Behaviour::leave_unset);
  const Row row = run_case(make_case(fake), quick(true));
  EXPECT_EQ(row.status, Status::error);
  EXPECT_NE(row.reason.find("non-finite"), std::string::npos) << row.reason;
}

// A NaN or Inf input: where the reference is NaN the output must be NaN, where it is an
// infinity the same infinity; the difference there is NaN and must not count as a match.
TEST(ConvbenchRunner, NonFiniteInputsAreComparedByIeeeClass) {
  for (const char* fill : {"nan@0", "inf@0"}) {
    InputCache inputs(1, parse_fill(fill));
    RunSettings settings = quick(true);
    settings.inputs = &inputs;
    FakeAlgorithm exact(Behaviour::exact);
    const Row same = run_case(make_case(exact), settings);
    EXPECT_EQ(same.status, Status::ok) << fill << ": " << same.reason;
    ASSERT_TRUE(same.max_abs_err);
    EXPECT_EQ(*same.max_abs_err, 0.0) << fill;
    FakeAlgorithm wrong(std::string(fill) == "nan@0" ? Behaviour::drop_nan : Behaviour::flip_inf);
    const Row lost = run_case(make_case(wrong), settings);
    EXPECT_EQ(lost.status, Status::error) << fill;
    EXPECT_NE(lost.reason.find("where the reference is"), std::string::npos)
        << fill << ": " << lost.reason;
  }
}

TEST(ConvbenchRunner, ThrowingPlanIsAnErrorRowNotAnException) {
  FakeAlgorithm fake(Behaviour::throw_in_plan);
  Row row;
  ASSERT_NO_THROW(row = run_case(make_case(fake), quick(false)));
  EXPECT_EQ(row.status, Status::error);
  EXPECT_EQ(row.reason, "backend: fake plan: FAKE_STATUS_INTERNAL_ERROR");
  EXPECT_FALSE(row.time_ms.has_value());
}

TEST(ConvbenchRunner, CaseTooLargeForTheHostIsRefusedBeforePlanning) {
  // 1.4 TB per activation tensor: the runner must refuse it before plan() (whose fake throws
  // a backend error) and before making the inputs, naming the bytes and the available memory.
  FakeAlgorithm fake(Behaviour::throw_in_plan);
  const Row row =
      run_case(make_case(fake, Pass::forward, "mb1ic1ih600000iw600000oc1kh3kw3"), quick(false));
  EXPECT_EQ(row.status, Status::error);
  EXPECT_EQ(row.reason.rfind("out_of_memory: case g1mb1ic1ih600000iw600000", 0), 0u) << row.reason;
  for (const char* part : {"host inputs 2879990400052 bytes", "available", "nothing was allocated"})
    EXPECT_NE(row.reason.find(part), std::string::npos) << part << ": " << row.reason;
  EXPECT_FALSE(row.plan_ms.has_value()) << "planned before the memory check";
}

TEST(ConvbenchWorkers, DeviceReachesEachWorkerOnItsCommandLine) {
  const std::vector<std::string> argv = {"convbench",     "run",     "--devices",
                                         "0,1",           "--out",   "sweep.csv",
                                         "--format=json", "--algos", "cuda.*"};
  for (const std::string device : {"0", "1"}) {
    const std::string part = "sweep.csv.worker" + std::to_string(std::stoi(device) + 1) + ".csv";
    const std::string worker = std::to_string(std::stoi(device) + 1) + "/2";
    EXPECT_EQ(worker_arguments(argv, part, worker, device),
              (std::vector<std::string>{"run", "--algos", "cuda.*", "--out", part, "--format",
                                        "csv", "--worker", worker, "--device", device}));
  }
}

TEST(ConvbenchWorkers, DeviceSettingSetsTheKnobWhereAnAlgorithmHasOne) {
  const convlab::Algorithm* gpu = nullptr;
  for (const convlab::Algorithm* a : convlab::registry().all()) {
    for (const convlab::KnobSpec& k : a->info().knobs) {
      if (k.name == "device" && !gpu) gpu = a;
    }
  }
  if (!gpu) GTEST_SKIP() << "no algorithm of this build has a device knob (CUDA not built)";
  std::vector<Case> cases = {make_case(convlab::registry().get("reference")), make_case(*gpu)};
  apply_device_setting("1", cases);
  EXPECT_EQ(cases[0].knobs.count("device"), 0u);
  EXPECT_EQ(cases[1].knobs.at("device"), "1");
  cases[1].knobs["device"] = "0";  // as --knob ALGO.device=0 would
  EXPECT_THROW(apply_device_setting("1", cases), UsageError);
  EXPECT_THROW(apply_device_setting("x", cases), UsageError);
}

TEST(ConvbenchRunner, BudgetRefusalIsOverBudget) {
  FakeAlgorithm fake(Behaviour::over_budget);
  const Row row = run_case(make_case(fake), quick(false));
  EXPECT_EQ(row.status, Status::over_budget);
  EXPECT_NE(row.reason.find("1 GiB budget"), std::string::npos);
}

TEST(ConvbenchRunner, RefusalAtPlanTimeIsUnsupported) {
  // An Error{unsupported} from plan() is a refusal, as from supports(): not an error row.
  FakeAlgorithm fake(Behaviour::refuse_in_plan);
  const Row row = run_case(make_case(fake), quick(false));
  EXPECT_EQ(row.status, Status::unsupported);
  EXPECT_EQ(row.reason, "fake: the library cannot link here");
  EXPECT_FALSE(row.time_ms.has_value());
}

TEST(ConvbenchRunner, UnsupportedAndUnavailableCarryTheirReasons) {
  FakeAlgorithm unsupported(Behaviour::unsupported), unavailable(Behaviour::unavailable);
  const Row a = run_case(make_case(unsupported), quick(false));
  EXPECT_EQ(a.status, Status::unsupported);
  EXPECT_EQ(a.reason, "fake: odd kernels only");
  EXPECT_FALSE(a.time_ms || a.plan_ms || a.workspace_bytes);
  const Row b = run_case(make_case(unavailable), quick(false));
  EXPECT_EQ(b.status, Status::unsupported);
  EXPECT_EQ(b.reason, "no fake device here");
}

TEST(ConvbenchRunner, RepetitionsStopAtMaxTime) {
  FakeAlgorithm fake(Behaviour::sleep_20ms);
  RunSettings s = quick(false);
  s.reps = 50;
  s.warmup = 0;
  s.max_time = 0.07;  // 20 ms runs: the fourth reaches 70 ms at the latest
  const Row row = run_case(make_case(fake), s);
  ASSERT_EQ(row.status, Status::ok) << row.reason;
  ASSERT_TRUE(row.reps);
  EXPECT_GE(*row.reps, 1);
  EXPECT_LE(*row.reps, 4);
  EXPECT_GE(*row.time_ms_min, 19.0);
  s.max_time = 0;  // no cap: every repetition
  s.reps = 3;
  EXPECT_EQ(run_case(make_case(fake), s).reps, 3);
}

TEST(ConvbenchRunner, InterleavedCasesTakeTheirRepetitionsInTurns) {
  FakeAlgorithm a(Behaviour::logged, "a"), b(Behaviour::logged, "b"), c(Behaviour::logged, "c");
  RunSettings s = quick(false);
  s.reps = 3;
  s.warmup = 2;
  run_log.clear();
  const std::vector<Row> rows = run_cases({make_case(a), make_case(b), make_case(c)}, s);
  // Each warms up as it is prepared, then the rounds: one timed run of each, in order.
  EXPECT_EQ(run_log, (std::vector<std::string>{"a", "a", "b", "b", "c", "c",  // warm-up
                                               "a", "b", "c", "a", "b", "c", "a", "b", "c"}));
  ASSERT_EQ(rows.size(), 3u);
  for (const Row& row : rows) {
    EXPECT_EQ(row.status, Status::ok) << row.reason;
    EXPECT_EQ(row.reps, 3);
  }
  // One case alone runs as run_case does: its repetitions back to back.
  run_log.clear();
  EXPECT_EQ(run_case(make_case(a), s).reps, 3);
  EXPECT_EQ(run_log, (std::vector<std::string>(5, "a")));
}

TEST(ConvbenchRunner, OneFailingCaseOfAnInterleavedGroupKeepsTheOthersRows) {
  FakeAlgorithm first(Behaviour::logged, "first"), in_plan(Behaviour::throw_in_plan),
      in_run(Behaviour::throw_in_run), declined(Behaviour::unsupported),
      wrong(Behaviour::off_by_one), last(Behaviour::logged, "last");
  RunSettings s = quick(true);
  s.reps = 4;
  run_log.clear();
  const std::vector<Row> rows =
      run_cases({make_case(first), make_case(in_plan), make_case(in_run), make_case(declined),
                 make_case(wrong), make_case(last)},
                s);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].status, Status::ok) << rows[0].reason;
  EXPECT_EQ(rows[0].reps, 4);
  EXPECT_EQ(rows[1].reason, "backend: fake plan: FAKE_STATUS_INTERNAL_ERROR");
  EXPECT_EQ(rows[2].status, Status::error);
  EXPECT_EQ(rows[2].reason, "backend: fake run: FAKE_LAUNCH_FAILURE");
  EXPECT_FALSE(rows[2].time_ms.has_value());
  EXPECT_EQ(rows[3].status, Status::unsupported);
  EXPECT_EQ(rows[4].status, Status::error);  // checked after the rounds, like any other
  EXPECT_EQ(rows[4].reason.rfind("accuracy: ", 0), 0u) << rows[4].reason;
  EXPECT_EQ(rows[4].reps, 4);
  EXPECT_EQ(rows[5].status, Status::ok) << rows[5].reason;
  EXPECT_EQ(rows[5].reps, 4);
  EXPECT_EQ(rows[5].max_abs_err, 0.0);
  EXPECT_EQ(std::count(run_log.begin(), run_log.end(), "last"), 5);  // warm-up + 4
}

TEST(ConvbenchRunner, InterleavedCasesStopAtMaxTimeEachOnItsOwn) {
  FakeAlgorithm slow(Behaviour::sleep_20ms), fast(Behaviour::logged, "fast");
  RunSettings s = quick(false);
  s.reps = 8;
  s.warmup = 0;
  s.max_time = 0.07;  // the slow case's fourth 20 ms run reaches it at the latest
  run_log.clear();
  const std::vector<Row> rows = run_cases({make_case(slow), make_case(fast)}, s);
  ASSERT_EQ(rows[0].status, Status::ok) << rows[0].reason;
  EXPECT_LE(*rows[0].reps, 4);
  EXPECT_EQ(rows[1].reps, 8);
  EXPECT_EQ(run_log.size(), 8u);
}

TEST(ConvbenchRunner, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({7.0}), 7.0);
}

TEST(ConvbenchCases, SeedDependsOnLayerAndPassOnly) {
  const ConvProblem a = convlab::parse_descriptor("mb2ic3ih9oc4kh3").problem;
  const ConvProblem b = convlab::parse_descriptor("mb2ic3ih9oc4kh5").problem;
  EXPECT_EQ(case_seed(1, a, Pass::forward), case_seed(1, a, Pass::forward));
  EXPECT_NE(case_seed(1, a, Pass::forward), case_seed(1, a, Pass::backward_data));
  EXPECT_NE(case_seed(1, a, Pass::forward), case_seed(1, b, Pass::forward));
  EXPECT_NE(case_seed(1, a, Pass::forward), case_seed(2, a, Pass::forward));
  // Pinned (FNV-1a + splitmix64, recomputed independently in Python), so that a change of
  // the derivation, which changes every sweep's inputs, does not pass unnoticed.
  EXPECT_EQ(case_seed(1, a, Pass::forward), 11841489415107878628ULL);
}

TEST(ConvbenchCases, LayerMajorOrderWithMbOverride) {
  SweepSpec spec;
  spec.layers.shapes = {"mb2ic3ih9oc4kh3n\"a\"", "mb2ic3ih9oc4kh5n\"b\""};
  spec.layers.mb = 3;
  spec.layers.algos = "reference";
  spec.passes = {Pass::forward, Pass::backward_filter};
  const std::vector<Case> cases = build_cases(spec);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].layer.name, "a");
  EXPECT_EQ(cases[1].layer.name, "a");
  EXPECT_EQ(cases[1].pass, Pass::backward_filter);
  EXPECT_EQ(cases[2].layer.name, "b");
  EXPECT_EQ(cases[3].index, 3u);
  EXPECT_EQ(cases[3].layer_index, 1u);
  for (const Case& c : cases) EXPECT_EQ(c.layer.problem.n, 3);
}

// A case's identity, made once with the case, is the key its row has when read back from an
// output file: --resume and the sweep digest match cases to rows by it.
TEST(ConvbenchCases, IdentityIsTheKeyOfItsRowInAnOutputFile) {
  SweepSpec spec;
  spec.layers.shapes = {"mb2ic3ih9oc4kh3n\"a\"", "mb2ic3ih9oc4kh3n\"a\"", "mb2ic3ih9oc4kh5"};
  spec.layers.algos = "reference";
  spec.passes = {Pass::forward, Pass::backward_data};
  const std::vector<Case> cases = build_cases(spec);
  ASSERT_EQ(cases.size(), 6u);
  SweepFile file;
  for (const Column& c : row_columns()) file.header.push_back(c.name);
  for (const Case& c : cases) {
    const Row row = make_row(c);
    std::vector<std::string> cells;
    for (const Column& column : row_columns()) {
      const Cell cell = column.get(row);
      cells.push_back(std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell)
                                                                : std::string());
    }
    file.rows.push_back(cells);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(cases[i].identity, file.key(i));
  EXPECT_EQ(cases[0].identity,
            "|a|g1mb2ic3ih9iw9oc4oh7ow7kh3kw3sh1sw1ph0pw0dh0dw0|fwd|reference|cpu");
  // The same layer listed twice is two cases of one identity; another layer, another.
  EXPECT_EQ(cases[0].identity, cases[2].identity);
  EXPECT_NE(cases[0].identity, cases[4].identity);
}

TEST(ConvbenchCases, SuiteAllIsEveryBuiltInSuiteAndDefaultIsConvnetBenchmarks) {
  SweepSpec all;
  all.layers.suites = {"all"};
  size_t expected = 0;
  for (const std::string& name : suite_names()) expected += load_suite(name).layers.size();
  EXPECT_EQ(collect_layers(all).size(), expected);
  EXPECT_EQ(expected, 5u + 9 + 20 + 51 + 5 + 18);
  const std::vector<SweepLayer> defaults = collect_layers(SweepSpec{});
  ASSERT_EQ(defaults.size(), 5u);
  for (const auto& layer : defaults) {
    EXPECT_EQ(layer.suite, "convnet-benchmarks");
    EXPECT_EQ(layer.layer.problem.n, kDefaultSweepMb);
  }
}

TEST(ConvbenchCases, DefaultAlgorithmsAreTheAvailableOnesReferenceOnlyWithCheck) {
  SweepSpec spec;
  spec.passes = {Pass::forward};
  auto names = [](const std::vector<const convlab::Algorithm*>& list) {
    std::vector<std::string> n;
    for (const auto* a : list) n.push_back(a->name());
    return n;
  };
  std::vector<std::string> expected;
  for (const auto* a : convlab::registry().all()) {
    if (a->available() && a->name() != "reference") expected.push_back(a->name());
  }
  if (!expected.empty()) EXPECT_EQ(names(select_algorithms(spec)), expected);
  spec.check = true;
  expected.insert(expected.begin(), "reference");  // registered first
  EXPECT_EQ(names(select_algorithms(spec)), expected);
}

TEST(ConvbenchCases, UnknownSuiteListsTheKnownOnes) {
  try {
    load_suite("alexnett");
    FAIL() << "no error";
  } catch (const convlab::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'alexnett'"), std::string::npos) << what;
    for (const char* name :
         {"alexnet", "vgg16", "resnet50", "googlenet", "convnet-benchmarks", "deepbench"}) {
      EXPECT_NE(what.find(name), std::string::npos) << name << " missing from: " << what;
    }
  }
}

TEST(ConvbenchSuites, LayerAndConvolutionCounts) {
  struct Expected {
    const char* name;
    size_t layers;
    long long convolutions;
    int64_t mb;
  };
  const Expected expected[] = {{"alexnet", 5, 5, 128},
                               {"vgg16", 9, 13, 64},
                               {"resnet50", 20, 53, 32},
                               {"googlenet", 51, 59, 32},
                               {"convnet-benchmarks", 5, 5, 128},
                               {"deepbench", 18, 18, 0}};
  EXPECT_EQ(suite_names().size(), std::size(expected));
  for (const Expected& e : expected) {
    const Suite suite = load_suite(e.name);
    EXPECT_EQ(suite.layers.size(), e.layers) << e.name;
    EXPECT_EQ(suite.convolutions(), e.convolutions) << e.name;
    for (const auto& layer : suite.layers) {
      if (e.mb) EXPECT_EQ(layer.problem.n, e.mb) << e.name << " " << layer.name;
      EXPECT_EQ(layer.name.rfind(std::string(e.name) + ":", 0), 0u) << layer.name;
    }
  }
}

TEST(ConvbenchSuites, ConvnetBenchmarksAreTheFiveClassicLayers) {
  // (h = w, c, k, r = s); batch 128, stride 1, no padding.
  const int64_t layers[5][4] = {
      {128, 3, 96, 11}, {64, 64, 128, 9}, {32, 128, 128, 9}, {16, 128, 128, 7}, {13, 384, 384, 3}};
  const Suite suite = load_suite("convnet-benchmarks");
  ASSERT_EQ(suite.layers.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    ConvProblem p;
    p.n = 128, p.h = p.w = layers[i][0], p.c = layers[i][1], p.k = layers[i][2];
    p.r = p.s = layers[i][3];
    EXPECT_EQ(suite.layers[i].problem, p) << i;
    EXPECT_EQ(suite.layers[i].name, "convnet-benchmarks:L" + std::to_string(i + 1));
  }
}

TEST(ConvbenchSuites, AlexnetKeepsThePapersTwoGroups) {
  const Suite suite = load_suite("alexnet");
  const int64_t groups[5] = {1, 2, 1, 2, 2};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(suite.layers[i].problem.groups, groups[i]) << i;
  EXPECT_EQ(suite.layers[0].problem.out_h(), 55);
}

TEST(ConvbenchReporters, CsvQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(ConvbenchReporters, CsvRowHasEveryColumnAndBlankAbsentValues) {
  std::ostringstream out;
  auto csv = make_reporter(Format::csv, out, false);
  Context context = Context::object();
  context["seed"] = 7;
  csv->begin(context, {});
  Row row;
  row.layer = "x";
  row.status = Status::unsupported;
  row.reason = "needs, a \"comma\"";
  csv->add(row);
  csv->end({});
  std::istringstream lines(out.str());
  std::string comment, header, line;
  std::getline(lines, comment);
  std::getline(lines, header);
  std::getline(lines, line);
  EXPECT_EQ(comment, "# seed: 7");
  EXPECT_EQ(header.rfind("suite,layer,descriptor,pass,algorithm,device,status,reason,", 0), 0u);
  // Every column after the reason is blank: one comma per column of the header.
  const size_t columns = static_cast<size_t>(std::count(header.begin(), header.end(), ',')) + 1;
  EXPECT_EQ(columns, row_columns().size());
  EXPECT_EQ(line, ",x,,,,,unsupported,\"needs, a \"\"comma\"\"\"" + std::string(columns - 8, ','));
}

}  // namespace
}  // namespace convbench
