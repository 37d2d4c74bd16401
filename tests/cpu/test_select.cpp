// Prediction (work counts, roofline, sweep CSVs, calibration) and budget-aware selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "convlab/cards.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/memory.hpp"
#include "convlab/registry.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

ConvProblem problem(const char* descriptor) { return parse_descriptor(descriptor).problem; }

Card test_card(const char* id, double flops, double bandwidth, int64_t memory = 1 << 30) {
  return Card{id, id, memory, memory, bandwidth, flops, "test", 2020, "test"};
}

// The count follows what an algorithm says it is, never its name: an algorithm named like
// an FFT but declaring itself a GEMM is counted as im2col.
TEST(Prediction, FamiliesFollowTheInfo) {
  const std::pair<Family, AlgorithmFamily> expected[] = {
      {Family::gemm, AlgorithmFamily::im2col},     {Family::fft, AlgorithmFamily::fft},
      {Family::fft_tiled, AlgorithmFamily::fft},   {Family::reference, AlgorithmFamily::direct},
      {Family::direct, AlgorithmFamily::direct},   {Family::winograd, AlgorithmFamily::direct},
      {Family::vendor, AlgorithmFamily::direct}};
  for (const auto& [family, count] : expected) {
    AlgorithmInfo info;
    info.name = "test.fft_named";
    info.family = family;
    EXPECT_EQ(algorithm_family(info), count) << to_string(family);
  }
  for (const Algorithm* a : registry().all()) {
    EXPECT_EQ(algorithm_family(a->name()), algorithm_family(a->info())) << a->name();
  }
  EXPECT_EQ(algorithm_family("cpu.im2col"), AlgorithmFamily::im2col);
  EXPECT_EQ(algorithm_family("reference"), AlgorithmFamily::direct);
  EXPECT_THROW(algorithm_family("no.such_algorithm"), Error);
}

TEST(Prediction, WorkCountsByHand) {
  // mb2 ic3 5x5 oc4 3x3 pad 1: output 5x5.
  const ConvProblem p = problem("mb2ic3ih5oc4kh3ph1");
  const double direct = 2.0 * 2 * 4 * 25 * 3 * 9;                      // 10800
  const double tensors = (2 * 3 * 25 + 4 * 3 * 9 + 2 * 4 * 25) * 4.0;  // 1832
  for (Pass pass : testing::all_passes()) {
    const WorkCount d = work_count(AlgorithmFamily::direct, p, pass);
    EXPECT_DOUBLE_EQ(d.flops, direct);
    EXPECT_DOUBLE_EQ(d.bytes, tensors);
    const double col = 4.0 * 2 * 3 * 9 * 25;  // 5400 bytes
    const WorkCount i = work_count(AlgorithmFamily::im2col, p, pass);
    EXPECT_DOUBLE_EQ(i.flops, direct + (pass == Pass::backward_data ? col / 4 : 0));
    EXPECT_DOUBLE_EQ(i.bytes, tensors + 2 * col);
    // The geometry needs 6 per axis (fft_geometry.hpp: E = (O-1)S + Rd - P = 6 and
    // x_count + P = 6), which is smooth: Hf = Wf = 6, M = 36, B = 6 * 4 = 24; transforms
    // 2*3 + 4*3 + 2*4 = 26.
    const WorkCount f = work_count(AlgorithmFamily::fft, p, pass);
    EXPECT_DOUBLE_EQ(f.flops, 26 * 2.5 * 36 * std::log2(36.0) + 8.0 * 24 * 2 * 3 * 4);
    EXPECT_DOUBLE_EQ(f.bytes, tensors + 26 * (2 * 8.0 * 24 + 2 * 4.0 * 36));
    EXPECT_EQ(f.model, "fft 6x6");
  }
  // 1x1 stride 1 unpadded: no column buffer.
  const ConvProblem pw = problem("mb2ic8ih6oc4kh1");
  EXPECT_DOUBLE_EQ(work_count(AlgorithmFamily::im2col, pw, Pass::forward).bytes,
                   work_count(AlgorithmFamily::direct, pw, Pass::forward).bytes);
  // A needed 11 is not 7-smooth: the transform is 12. Groups divide the filter transforms.
  EXPECT_EQ(work_count(AlgorithmFamily::fft, problem("mb1ic4ih10oc4kh3ph1"), Pass::forward).model,
            "fft 12x12");
  const WorkCount g = work_count(AlgorithmFamily::fft, problem("g2mb1ic4ih6oc6kh3"), Pass::forward);
  EXPECT_DOUBLE_EQ(g.flops,
                   (4 + 6 * 2 + 6) * 2.5 * 36 * std::log2(36.0) + 8.0 * (6 * 4) * 1 * 2 * 3 * 2);
}

TEST(Prediction, RooflineIsTheSlowerOfComputeAndMemory) {
  const Card card = test_card("c", 1e12, 1e11);
  const Prediction a = roofline({2e9, 1e6, "x"}, card);  // 2 ms compute, 0.01 ms memory
  EXPECT_DOUBLE_EQ(a.compute_ms, 2.0);
  EXPECT_DOUBLE_EQ(a.memory_ms, 0.01);
  EXPECT_DOUBLE_EQ(a.time_ms, 2.0);
  EXPECT_FALSE(a.memory_bound);
  const Prediction b = roofline({1e6, 5e8, "x"}, card);
  EXPECT_DOUBLE_EQ(b.time_ms, 5.0);
  EXPECT_TRUE(b.memory_bound);
  // Faster memory on the newer card: a memory-bound case speeds up by the bandwidth ratio.
  const ConvProblem p = problem("mb32ic64ih56oc64kh1");
  const double t970 =
      predict("cpu.im2col", p, Pass::forward, card_database().get("gtx970")).time_ms;
  const double th200 = predict("cpu.im2col", p, Pass::forward, card_database().get("h200")).time_ms;
  EXPECT_LT(th200, t970);
}

const char* const kSweep =
    "# convbench 0.1.0\n"
    "# device: cpu (2 threads)\n"
    "suite,layer,descriptor,pass,algorithm,device,status,reason,time_ms,time_ms_min,"
    "time_ms_max\n"
    "alexnet,conv1,g1mb2ic3ih227iw227oc96oh55ow55kh11kw11sh4sw4ph0pw0dh0dw0,fwd,cpu.im2col,"
    "cpu,ok,,12.5,12,14\n"
    "alexnet,conv1,\"g1mb2ic3ih227oc96kh11sh4n\"\"conv1\"\"\",bwd_data,cpu.fft,cpu,ok,,30,29,"
    "31\n"
    "alexnet,conv2,mb2ic96ih27oc256kh5ph2,fwd,cpu.fft,cpu,unsupported,\"too big, sorry\",,,\n"
    "\n"
    "alexnet,conv2,mb2ic96ih27oc256kh5ph2,fwd,cpu.im2col,cpu,ok,,7,,\n";

TEST(SweepCsv, ReadsTheOkRowsByColumnName) {
  const auto rows = parse_measured_times(kSweep, "sweep.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].algorithm, "cpu.im2col");
  EXPECT_EQ(rows[0].problem, problem("mb2ic3ih227oc96kh11sh4"));
  EXPECT_EQ(rows[0].device, "cpu");
  EXPECT_DOUBLE_EQ(rows[0].time_ms, 12.5);
  EXPECT_DOUBLE_EQ(rows[0].time_ms_min, 12);
  EXPECT_DOUBLE_EQ(rows[0].time_ms_max, 14);
  EXPECT_EQ(rows[1].pass, Pass::backward_data);
  EXPECT_EQ(rows[1].problem, problem("mb2ic3ih227oc96kh11sh4"));
  EXPECT_DOUBLE_EQ(rows[2].time_ms_min, 7);  // empty min/max fall back to the median
}

TEST(SweepCsv, ErrorsNameTheFileAndLine) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_measured_times(text, "s.csv");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of("descriptor,pass,algorithm\n").find("s.csv:1: the header has no 'time_ms'"),
            std::string::npos);
  const std::string header = "descriptor,pass,algorithm,time_ms\n";
  EXPECT_NE(error_of(header + "mb2ic3ih5oc4kh3,fwd,a,1\nmb2ic3ih5oc4kh3,fwd,a\n")
                .find("s.csv:3: malformed row"),
            std::string::npos);
  EXPECT_NE(error_of(header + "\"mb2ic3ih5oc4kh3,fwd,a,1\n").find("s.csv:2: malformed row"),
            std::string::npos);  // a torn row: the quote never closes
  EXPECT_NE(error_of(header + "mb2ic3ih5oc4kh3,fwd,a,fast\n").find("'fast' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(header + "mb2ic3ih5oc4kh3,sideways,a,1\n").find("s.csv:2: unknown pass"),
            std::string::npos);
  try {
    read_measured_times("/nonexistent/sweep.csv");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
  }
}

// A sweep of algorithms this build does not have (a GPU sweep read on a CPU-only machine)
// calibrates when its rows say each algorithm's family, and is refused, naming the
// algorithm, when they do not: the count is never guessed from a name.
TEST(Calibration, FamilyColumnCountsAlgorithmsThisBuildLacks) {
  const Card card = test_card("here", 2e11, 3e10);
  const ConvProblem p = problem("mb4ic16ih32oc32kh3ph1");
  const double fft_ms = roofline(work_count(AlgorithmFamily::fft, p, Pass::forward), card).time_ms;
  const std::string row = "mb4ic16ih32oc32kh3ph1,fwd,elsewhere.fancy,gpu,ok,";
  const auto with = parse_measured_times(
      "descriptor,pass,algorithm,device,status,family,time_ms\n" + row + "fft," +
          std::to_string(fft_ms * 4) + "\n",
      "with.csv");
  ASSERT_EQ(with.size(), 1u);
  ASSERT_TRUE(with[0].family.has_value());
  EXPECT_EQ(*with[0].family, Family::fft);
  EXPECT_NEAR(calibrate(with, card).find("elsewhere.fancy")->efficiency, 0.25, 1e-6);
  const auto without = parse_measured_times(
      "descriptor,pass,algorithm,device,status,time_ms\n" + row + "1.5\n", "without.csv");
  try {
    calibrate(without, card);
    ADD_FAILURE() << "an unknown algorithm without a family was counted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("elsewhere.fancy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_measured_times("descriptor,pass,algorithm,family,time_ms\n"
                                    "mb1ic1ih4oc1kh3,fwd,x,fast_fourier,1\n",
                                    "bad.csv"),
               Error);
}

TEST(Calibration, RecoversTheEfficiencyAndCarriesItToAnotherCard) {
  const Card measured_on = test_card("here", 2e11, 3e10);
  const Card other = card_database().get("v100");
  const std::vector<ConvProblem> problems = {problem("mb4ic16ih32oc32kh3ph1"),
                                             problem("mb4ic64ih14oc64kh1"),
                                             problem("mb2ic32ih28oc48kh5ph2sh2")};
  // Algorithms every build has (the calibration is of counts, not of running them).
  std::vector<MeasuredTime> times;
  for (const ConvProblem& p : problems) {
    for (const char* algo : {"cpu.im2col", "cpu.winograd"}) {
      const double eff = std::string(algo) == "cpu.winograd" ? 0.5 : 0.25;
      MeasuredTime t;
      t.problem = p;
      t.pass = Pass::forward;
      t.algorithm = algo;
      t.device = "cpu";
      t.time_ms = predict(algo, p, Pass::forward, measured_on).time_ms / eff;
      times.push_back(t);
    }
  }
  const Calibration cal = calibrate(times, measured_on);
  EXPECT_EQ(cal.card_id, "here");
  EXPECT_EQ(cal.device, "cpu");
  ASSERT_NE(cal.find("cpu.winograd"), nullptr);
  EXPECT_NEAR(cal.find("cpu.winograd")->efficiency, 0.5, 1e-12);
  EXPECT_NEAR(cal.find("cpu.im2col")->efficiency, 0.25, 1e-12);
  EXPECT_EQ(cal.find("cpu.im2col")->cases, 3);
  EXPECT_NEAR(cal.find("cpu.winograd")->min_ratio, 0.5, 1e-12);
  EXPECT_EQ(cal.find("reference"), nullptr);
  const ConvProblem p = problems[0];
  const Prediction raw = predict("cpu.winograd", p, Pass::forward, other);
  const Prediction scaled = predict("cpu.winograd", p, Pass::forward, other, &cal);
  EXPECT_TRUE(scaled.calibrated);
  EXPECT_NEAR(scaled.time_ms, raw.time_ms / 0.5, 1e-12 * raw.time_ms);
  const Prediction unknown = predict("reference", p, Pass::forward, other, &cal);
  EXPECT_FALSE(unknown.calibrated);
  EXPECT_DOUBLE_EQ(unknown.efficiency, 1.0);

  std::vector<MeasuredTime> mixed = times;
  mixed[0].device = "gpu";
  EXPECT_THROW(calibrate(mixed, measured_on), Error);
  EXPECT_EQ(calibrate(mixed, measured_on, "cpu").find("cpu.im2col")->cases, 2);
  EXPECT_THROW(calibrate({}, measured_on), Error);
  EXPECT_THROW(calibrate(times, measured_on, "tpu"), Error);
}

TEST(Calibration, OnARealCpuSweepReproducesTheSweepWithinItsNoise) {
  // A short sweep on this machine, calibrated against a card describing it. The card's
  // figures are nominal (the efficiency absorbs their scale); calibrated predictions of the
  // same sweep must give each algorithm's total time within the sweep's own min..max range.
  const Card host = test_card("host", 1e11, 2e10);
  const std::vector<ConvProblem> problems = {problem("mb2ic8ih16oc8kh3ph1"),
                                             problem("mb2ic16ih12oc16kh1"),
                                             problem("mb1ic4ih20oc8kh5ph2sh2")};
  std::vector<MeasuredTime> times;
  const uint64_t seed = testing::run_seed();
  for (const Algorithm* a : registry().all()) {
    if (a->device() != Device::cpu || !a->available() || a->name() == "reference") continue;
    for (const ConvProblem& p : problems) {
      if (!a->supports(p, Pass::forward)) continue;
      auto plan = a->plan(p, Pass::forward);
      const HostTensors host_tensors = make_inputs(p, Pass::forward, seed);
      CaseBuffers buffers(a->context(), p, host_tensors, plan->workspace_bytes());
      std::vector<double> reps;
      for (int i = 0; i < 9; ++i) {
        const double ms =
            a->context().time_ms([&] { plan->run(buffers.tensors(), buffers.workspace()); });
        if (i >= 2) reps.push_back(ms);  // the first two are warm-up
      }
      std::sort(reps.begin(), reps.end());
      MeasuredTime t;
      t.problem = p;
      t.pass = Pass::forward;
      t.algorithm = a->name();
      t.device = "cpu";
      t.time_ms = reps[reps.size() / 2];
      t.time_ms_min = reps.front();
      t.time_ms_max = reps.back();
      times.push_back(t);
    }
  }
  if (times.empty()) GTEST_SKIP() << "no CPU algorithm besides the reference is built";
  const Calibration cal = calibrate(times, host);
  std::map<std::string, double> predicted, lo, hi;
  for (const MeasuredTime& t : times) {
    const double p = predict(t.algorithm, t.problem, t.pass, host, &cal).time_ms;
    std::printf("%-12s %-28s measured %8.4f ms [%8.4f, %8.4f]  calibrated %8.4f ms\n",
                t.algorithm.c_str(), t.problem.descriptor().c_str(), t.time_ms, t.time_ms_min,
                t.time_ms_max, p);
    predicted[t.algorithm] += p;
    lo[t.algorithm] += t.time_ms_min;
    hi[t.algorithm] += t.time_ms_max;
  }
  for (const auto& [algo, total] : predicted) {
    EXPECT_GE(total, lo[algo] * (1 - 1e-9)) << algo;
    EXPECT_LE(total, hi[algo] * (1 + 1e-9)) << algo;
  }
}

// Selection needs algorithms with known memory and names that map to families.
class FakeAlgorithm final : public Algorithm {
 public:
  FakeAlgorithm(std::string name, std::size_t workspace, bool supported = true,
                bool available = true, Family family = Family::direct)
      : name_(std::move(name)),
        workspace_(workspace),
        supported_(supported),
        available_(available) {
    info_.name = name_;
    info_.family = family;
    info_.backend = "test";
    info_.description = "test double";
  }
  const AlgorithmInfo& info() const override { return info_; }
  Support available() const override {
    return available_ ? Support::yes() : Support::no("not here");
  }
  Support supports(const ConvProblem& p, Pass) const override {
    p.validate();
    return supported_ ? Support::yes() : Support::no("not this one");
  }
  DeviceContext& context() const override { return host_context(); }

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem&, Pass, const KnobValues&) const override {
    struct FakePlan final : Plan {
      explicit FakePlan(std::size_t ws) : ws(ws) {}
      std::size_t workspace_bytes() const override { return ws; }
      void execute(const Tensors&, const Workspace&, Stream) override {}
      std::size_t ws;
    };
    return std::make_unique<FakePlan>(workspace_);
  }

 private:
  std::string name_;
  std::size_t workspace_;
  bool supported_, available_;
  AlgorithmInfo info_;
};

TEST(Select, TheFastestMeasuredThatFits) {
  const ConvProblem p = problem("mb2ic16ih16oc16kh3ph1");
  const int64_t tensors = p.tensor_bytes().total();
  const FakeAlgorithm fast("x.fft", 1 << 20), mid("x.im2col", 1 << 10), slow("x.direct", 0);
  TimingTable t;
  t.add(p, Pass::forward, "x.fft", 1.0);
  t.add(p, Pass::forward, "x.im2col", 2.0);
  t.add(p, Pass::forward, "x.direct", 3.0);
  SelectOptions o;
  o.candidates = {&slow, &mid, &fast};
  Selection s = select(p, Pass::forward, tensors + (1 << 20), &t, o);
  EXPECT_EQ(s.chosen, &fast);
  EXPECT_TRUE(s.measured);
  EXPECT_DOUBLE_EQ(s.time_ms, 1.0);
  // One byte less and the FFT is over budget: im2col wins.
  s = select(p, Pass::forward, tensors + (1 << 20) - 1, &t, o);
  EXPECT_EQ(s.chosen, &mid);
  EXPECT_EQ(s.candidates[2].status, Candidate::Status::over_budget);
  EXPECT_NE(s.describe().find("x.im2col (2 ms measured"), std::string::npos) << s.describe();
  EXPECT_NE(s.describe().find("x.fft over_budget"), std::string::npos) << s.describe();
  // Only the tensors fit: the workspace-free algorithm.
  s = select(p, Pass::forward, tensors, &t, o);
  EXPECT_EQ(s.chosen, &slow);
  // Less than the tensors: nothing fits, which is an answer, not an error.
  s = select(p, Pass::forward, tensors - 1, &t, o);
  EXPECT_EQ(s.chosen, nullptr);
  EXPECT_NE(s.describe().find("nothing fits"), std::string::npos);
  EXPECT_THROW(select(p, Pass::forward, 0, &t, o), Error);
}

TEST(Select, MeasurementsAreNotMixedWithPredictions) {
  const ConvProblem p = problem("mb2ic16ih16oc16kh3ph1");
  const FakeAlgorithm a("x.fft", 0), b("x.im2col", 0), gone("x.gone", 0, true, false),
      no("x.no", 0, false);
  TimingTable t;
  t.add(p, Pass::forward, "x.im2col", 5.0);
  SelectOptions o;
  o.candidates = {&a, &b, &gone, &no};
  const Selection s = select(p, Pass::forward, int64_t{1} << 30, &t, o);
  EXPECT_EQ(s.chosen, &b);
  EXPECT_EQ(s.candidates[0].status, Candidate::Status::not_measured);
  EXPECT_EQ(s.candidates[2].status, Candidate::Status::unavailable);
  EXPECT_EQ(s.candidates[3].status, Candidate::Status::unsupported);
  // A timing for another pass does not count.
  TimingTable other;
  other.add(p, Pass::backward_data, "x.fft", 1.0);
  EXPECT_THROW(select(p, Pass::forward, int64_t{1} << 30, &other, o), Error);
  EXPECT_THROW(t.add(p, Pass::forward, "x.fft", -1), Error);
}

TEST(Select, PredictsOnTheCardWhenNothingIsMeasured) {
  const ConvProblem p = problem("mb8ic64ih28oc64kh5ph2");
  const FakeAlgorithm f("x.fft", 0, true, true, Family::fft),
      i("x.im2col", 0, true, true, Family::gemm), d("x.direct", 0);
  SelectOptions o;
  o.candidates = {&f, &i, &d};
  try {
    select(p, Pass::forward, int64_t{1} << 30, nullptr, o);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("no card was given"), std::string::npos) << e.what();
  }
  const Card& card = card_database().get("gtx970");
  o.card = &card;
  const Selection s = select(p, Pass::forward, int64_t{1} << 30, nullptr, o);
  ASSERT_NE(s.chosen, nullptr);
  EXPECT_FALSE(s.measured);
  double best = 1e300;
  std::string best_name;
  for (const FakeAlgorithm* a : {&f, &i, &d}) {
    const double ms = predict(a->info(), p, Pass::forward, card).time_ms;
    if (ms < best) best = ms, best_name = a->name();
  }
  EXPECT_EQ(s.chosen->name(), best_name);
  EXPECT_DOUBLE_EQ(s.time_ms, best);
  // A calibration that makes the winner ten times slower changes the choice.
  Calibration cal;
  cal.by_algorithm[best_name] = {0.1, 1, 0.1, 0.1};
  o.calibration = &cal;
  EXPECT_NE(select(p, Pass::forward, int64_t{1} << 30, nullptr, o).chosen->name(), best_name);
}

TEST(Select, DefaultsToEveryRegisteredAlgorithmButTheReference) {
  const ConvProblem p = problem("mb2ic4ih8oc4kh3ph1");
  TimingTable t;
  t.add(p, Pass::forward, "reference", 1e-6);
  SelectOptions o;
  const Card& card = card_database().get("t4");
  o.card = &card;
  const Selection s = select(p, Pass::forward, int64_t{1} << 30, &t, o);
  for (const Candidate& c : s.candidates) EXPECT_NE(c.algorithm->name(), "reference");
  EXPECT_EQ(s.candidates.size() + 1, registry().all().size());
}

}  // namespace
}  // namespace convlab
