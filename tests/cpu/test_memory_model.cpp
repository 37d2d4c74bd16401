// The memory model: per pass it equals what the plans report (and what the harness then
// allocates and runs with); per network its terms are the formulas of docs/memory-model.md;
// the largest batch that fits is the one a brute-force scan finds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
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

// An algorithm whose workspace and support are whatever the test says, so that network
// terms can be computed by hand.
class FakeAlgorithm final : public Algorithm {
 public:
  using WorkspaceFn = std::function<std::size_t(const ConvProblem&, Pass)>;
  using SupportFn = std::function<Support(const ConvProblem&, Pass)>;
  FakeAlgorithm(std::string name, WorkspaceFn workspace, SupportFn support = {},
                bool available = true)
      : name_(std::move(name)),
        workspace_(std::move(workspace)),
        support_(std::move(support)),
        available_(available) {
    info_.name = name_;
    info_.backend = "test";
    info_.description = "test double";
  }
  const AlgorithmInfo& info() const override { return info_; }
  Support available() const override {
    return available_ ? Support::yes() : Support::no("no such device in this test");
  }
  Support supports(const ConvProblem& p, Pass pass) const override {
    p.validate();
    return support_ ? support_(p, pass) : Support::yes();
  }
  DeviceContext& context() const override { return host_context(); }

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem& p, Pass pass,
                                  const KnobValues&) const override {
    class FakePlan final : public Plan {
     public:
      explicit FakePlan(std::size_t ws) : ws_(ws) {}
      std::size_t workspace_bytes() const override { return ws_; }

     protected:
      void execute(const Tensors&, const Workspace&, Stream) override {}

     private:
      std::size_t ws_;
    };
    if (!available_) throw Error(ErrorCode::unavailable, "no device");
    return std::make_unique<FakePlan>(workspace_(p, pass));
  }

 private:
  std::string name_;
  WorkspaceFn workspace_;
  SupportFn support_;
  bool available_;
  AlgorithmInfo info_;
};

std::vector<std::filesystem::path> suite_files() {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(CONVLAB_SOURCE_DIR) / "bench" / "suites")) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(PassMemory, EqualsThePlanWorkspaceForEveryAlgorithmOnEverySuiteLayerAtMb2) {
  const auto files = suite_files();
  ASSERT_FALSE(files.empty()) << "no suites under bench/suites";
  int known = 0, without = 0;
  for (const auto& file : files) {
    for (const Layer& layer : read_shape_file(file.string())) {
      ConvProblem p = layer.problem;
      p.n = 2;
      for (const Algorithm* a : registry().all()) {
        for (Pass pass : testing::all_passes()) {
          SCOPED_TRACE(file.filename().string() + " " + layer.name + " " + a->name() + " " +
                       to_string(pass));
          const PassMemory m = pass_memory(*a, p, pass);
          EXPECT_EQ(m.algorithm, a->name());
          EXPECT_EQ(m.tensors.x, p.x_bytes());
          EXPECT_EQ(m.tensors.w, p.w_bytes());
          EXPECT_EQ(m.tensors.y, p.y_bytes());
          if (a->available() && a->supports(p, pass)) {
            ASSERT_TRUE(m.known()) << m.reason;
            const auto plan = a->plan(p, pass);
            EXPECT_EQ(m.workspace, static_cast<int64_t>(plan->workspace_bytes()));
            EXPECT_EQ(m.total(), p.x_bytes() + p.w_bytes() + p.y_bytes() + m.workspace);
            ++known;
          } else {
            EXPECT_FALSE(m.known());
            EXPECT_FALSE(m.reason.empty());
            EXPECT_THROW(m.total(), Error);
            ++without;
          }
        }
      }
    }
  }
  std::printf(
      "pass memory vs plans: %d cases with a plan, %d without (unsupported or "
      "unavailable here)\n",
      known, without);
  EXPECT_GT(known, 0);
}

TEST(PassMemory, IsWhatTheHarnessAllocatesAndTheRunNeeds) {
  // The model's workspace is handed to the run as the whole workspace: it must be enough
  // (the run checks it and the result must match the reference), and the harness's device
  // allocation must equal the model's total.
  const uint64_t seed = testing::run_seed();
  std::vector<ConvProblem> problems = testing::scaled_suite_layers();
  if (problems.size() > 12) problems.resize(12);
  int checked = 0;
  for (const Algorithm* a : registry().all()) {
    if (a->device() != Device::cpu || !a->available()) continue;
    for (const ConvProblem& p : problems) {
      for (Pass pass : testing::all_passes()) {
        const PassMemory m = pass_memory(*a, p, pass);
        if (!m.known()) continue;
        SCOPED_TRACE(a->name() + " " + to_string(pass) + " " + p.descriptor() + " seed " +
                     std::to_string(seed));
        const HostTensors host = make_inputs(p, pass, seed);
        CaseBuffers buffers(a->context(), p, host, static_cast<std::size_t>(m.workspace));
        EXPECT_EQ(static_cast<int64_t>(buffers.device_bytes()), m.total());
        const auto plan = a->plan(p, pass);
        plan->run(buffers.tensors(), buffers.workspace());
        const AccuracyReport r = compare_with_reference(
            p, pass, host, buffers.download_output(pass), plan->error_bound());
        EXPECT_TRUE(r.within_bound) << r.detail;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(PassMemory, AnAlgorithmThatCannotPlanHereSaysWhy) {
  const FakeAlgorithm gone(
      "fake.gpu", [](const ConvProblem&, Pass) { return 0; }, {}, false);
  ConvProblem p = parse_descriptor("mb2ic3ih8oc4kh3").problem;
  const PassMemory m = pass_memory(gone, p, Pass::forward);
  EXPECT_EQ(m.source, MemorySource::unavailable);
  EXPECT_EQ(m.reason, "no such device in this test");
  try {
    (void)m.total();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unavailable);
    EXPECT_NE(std::string(e.what()).find("fake.gpu fwd"), std::string::npos) << e.what();
  }
  for (const Algorithm* a : registry().all()) {
    const Support s = a->available();
    if (s) continue;
    const PassMemory real = pass_memory(*a, p, Pass::forward);
    EXPECT_EQ(real.source, MemorySource::unavailable) << a->name();
    EXPECT_EQ(real.reason, s.reason) << a->name();
  }
  const FakeAlgorithm picky(
      "fake.picky", [](const ConvProblem&, Pass) { return 0; },
      [](const ConvProblem&, Pass) { return Support::no("too picky"); });
  const PassMemory u = pass_memory(picky, p, Pass::backward_data);
  EXPECT_EQ(u.source, MemorySource::unsupported);
  EXPECT_EQ(u.reason, "too picky");
  // An invalid problem is an error, not a disposition.
  EXPECT_THROW(pass_memory(picky, ConvProblem{}, Pass::forward), Error);
}

// A knob that sizes the workspace (how many images share cpu.im2col's column buffer) is
// planned with: the figure follows the knob, as the plan the run makes with it does.
TEST(PassMemory, FollowsTheKnobsItIsPlannedWith) {
  const Algorithm& im2col = registry().get("cpu.im2col");
  const ConvProblem p = parse_descriptor("mb4ic8ih16oc8kh3ph1").problem;
  const PassMemory one = pass_memory(im2col, p, Pass::forward, {{"images_per_gemm", "1"}});
  const PassMemory four = pass_memory(im2col, p, Pass::forward, {{"images_per_gemm", "4"}});
  ASSERT_TRUE(one.known() && four.known());
  EXPECT_GT(four.workspace, one.workspace);  // more images share (and fill) a column buffer
  EXPECT_EQ(static_cast<std::size_t>(one.workspace),
            im2col.plan(p, Pass::forward, {{"images_per_gemm", "1"}})->workspace_bytes());
  EXPECT_EQ(static_cast<std::size_t>(four.workspace),
            im2col.plan(p, Pass::forward, {{"images_per_gemm", "4"}})->workspace_bytes());
  EXPECT_EQ(pass_memory(im2col, p, Pass::forward).workspace,
            static_cast<int64_t>(im2col.plan(p, Pass::forward)->workspace_bytes()));
}

// Two layers: A (repeat 3) and B. Hand-computed terms at batch 4.
std::vector<Layer> two_layer_suite() {
  return {parse_descriptor("mb1ic3ih32oc16kh3ph1n\"a*3\""),
          parse_descriptor("mb1ic16ih16oc32kh5sh2ph2n\"b\"")};
}

TEST(NetworkMemory, TrainingTermsAreTheDocumentedFormulas) {
  // Workspace = 100 * n + 1 (fwd), 200 * n + 2 (bwd_data), 300 * n + 3 (bwd_filter).
  const FakeAlgorithm fake("fake.ws", [](const ConvProblem& p, Pass pass) {
    return static_cast<std::size_t>((100 * (static_cast<int>(pass) + 1)) * p.n +
                                    static_cast<int>(pass) + 1);
  });
  const auto suite = two_layer_suite();
  const NetworkMemory m = network_memory(suite, 4, {&fake}, {true, 1});
  ConvProblem a = suite[0].problem, b = suite[1].problem;
  a.n = b.n = 4;
  const int64_t weights = 3 * a.w_bytes() + b.w_bytes();
  EXPECT_EQ(m.batch, 4);
  EXPECT_TRUE(m.complete());
  EXPECT_EQ(m.weights, weights);
  EXPECT_EQ(m.weight_gradients, weights);
  EXPECT_EQ(m.optimizer_state, weights);
  EXPECT_EQ(m.activations, 3 * a.x_bytes() + b.x_bytes());
  EXPECT_EQ(m.gradient_buffers, std::max(a.x_bytes() + a.y_bytes(), b.x_bytes() + b.y_bytes()));
  EXPECT_EQ(m.workspace, 300 * 4 + 3);
  EXPECT_EQ(m.workspace_case, "a bwd_filter fake.ws");
  EXPECT_EQ(m.cases.size(), 6u);
  EXPECT_EQ(m.total(), 3 * weights + m.activations + m.gradient_buffers + m.workspace);

  const NetworkMemory adam = network_memory(suite, 4, {&fake}, {true, 2});
  EXPECT_EQ(adam.optimizer_state, 2 * weights);
  EXPECT_EQ(adam.total() - m.total(), weights);
}

TEST(NetworkMemory, InferenceKeepsOnlyTheLiveLayerAndForwardWorkspaces) {
  const FakeAlgorithm fake("fake.ws", [](const ConvProblem& p, Pass pass) {
    return static_cast<std::size_t>(pass == Pass::forward ? 10 * p.n : 1000000);
  });
  const auto suite = two_layer_suite();
  const NetworkMemory m = network_memory(suite, 8, {&fake}, {false, 1});
  ConvProblem a = suite[0].problem, b = suite[1].problem;
  a.n = b.n = 8;
  EXPECT_EQ(m.weights, 3 * a.w_bytes() + b.w_bytes());
  EXPECT_EQ(m.weight_gradients, 0);
  EXPECT_EQ(m.optimizer_state, 0);
  EXPECT_EQ(m.activations, std::max(a.x_bytes() + a.y_bytes(), b.x_bytes() + b.y_bytes()));
  EXPECT_EQ(m.gradient_buffers, 0);
  EXPECT_EQ(m.workspace, 80);
  EXPECT_EQ(m.cases.size(), 2u);
}

TEST(NetworkMemory, FallsBackAlongThePreferenceAndReportsWhatNothingCovers) {
  const FakeAlgorithm big(
      "fake.big", [](const ConvProblem&, Pass) { return 5000; },
      [](const ConvProblem& p, Pass) {
        return p.stride_h > 1 ? Support::no("no strides") : Support::yes();
      });
  const FakeAlgorithm small("fake.small", [](const ConvProblem&, Pass) { return 7; });
  const auto suite = two_layer_suite();
  const NetworkMemory m = network_memory(suite, 2, {&big, &small});
  ASSERT_TRUE(m.complete());
  for (const PassMemory& c : m.cases) {
    EXPECT_EQ(c.algorithm, c.problem.stride_h > 1 ? "fake.small" : "fake.big");
  }
  EXPECT_EQ(m.workspace, 5000);

  const NetworkMemory alone = network_memory(suite, 2, {&big});
  EXPECT_FALSE(alone.complete());
  ASSERT_EQ(alone.missing.size(), 3u);
  EXPECT_EQ(alone.missing[0], "b fwd: fake.big: no strides");
  try {
    (void)alone.total();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("b bwd_filter: fake.big: no strides"), std::string::npos);
  }
  EXPECT_THROW(network_memory({}, 2, {&big}), Error);
  EXPECT_THROW(network_memory(suite, 2, {}), Error);
  EXPECT_THROW(network_memory(suite, 0, {&big}), Error);
  EXPECT_THROW(network_memory(suite, 2, {&big}, {true, -1}), Error);
}

TEST(LargestBatch, MatchesABruteForceScan) {
  const FakeAlgorithm fake("fake.lin", [](const ConvProblem& p, Pass pass) {
    return static_cast<std::size_t>(pass == Pass::backward_filter ? 4096 * p.n + 12345 : 64);
  });
  const auto suite = two_layer_suite();
  auto total = [&](int64_t b) { return network_memory(suite, b, {&fake}).total(); };
  for (int64_t budget : {total(1) - 1, total(1), total(1) + 1, total(37), total(37) + 1, total(64),
                         total(100) - 1}) {
    int64_t expected = 0;
    for (int64_t b = 1; b <= 200 && total(b) <= budget; ++b) expected = b;
    const BatchFit fit = largest_batch(suite, {&fake}, budget);
    EXPECT_EQ(fit.batch, expected) << "budget " << budget;
    EXPECT_FALSE(fit.capped);
    if (expected > 0) {
      EXPECT_EQ(fit.memory.batch, expected);
      EXPECT_EQ(fit.memory.total(), total(expected));
    }
  }
  const BatchFit capped = largest_batch(suite, {&fake}, total(1000), {}, 50);
  EXPECT_EQ(capped.batch, 50);
  EXPECT_TRUE(capped.capped);
  EXPECT_EQ(largest_batch(suite, {&fake}, total(13), {}, 13).batch, 13);
  EXPECT_THROW(largest_batch(suite, {&fake}, 0), Error);
  EXPECT_THROW(largest_batch(suite, {&fake}, 100, {}, 0), Error);
}

TEST(LargestBatch, FindsBatchesPastABoundaryWhenTheWorkspaceShrinks) {
  // A workspace that is large at even batches and small at odd ones: the total is not
  // monotone, and the largest fitting batch can sit just above a batch that does not fit.
  const FakeAlgorithm zigzag("fake.zigzag", [](const ConvProblem& p, Pass) {
    return static_cast<std::size_t>(p.n % 2 == 0 ? 3000000 : 1000);
  });
  const auto suite = two_layer_suite();
  auto total = [&](int64_t b) { return network_memory(suite, b, {&zigzag}).total(); };
  for (int64_t budget :
       {total(7), total(8), total(9) + 5, total(20), total(21) - 1, total(2) - 1}) {
    int64_t expected = 0;
    for (int64_t b = 1; b <= 400; ++b) {
      if (total(b) <= budget) expected = b;
    }
    EXPECT_EQ(largest_batch(suite, {&zigzag}, budget).batch, expected) << "budget " << budget;
  }
}

TEST(LargestBatch, MatchesABruteForceScanForTheAlgorithmsBuiltHere) {
  // cpu.im2col's workspace depends on how the batch splits among threads, so it is not
  // monotone in the batch: the search must still find the largest batch that fits.
  const std::vector<Layer> suite =
      read_shape_file(std::string(CONVLAB_SOURCE_DIR) + "/bench/suites/alexnet");
  for (const Algorithm* a : registry().all()) {
    if (!a->available() || a->name() == "reference") continue;
    const std::vector<const Algorithm*> pref = {a, &registry().get("reference")};
    auto total = [&](int64_t b) { return network_memory(suite, b, pref).total(); };
    for (int64_t target : {3, 10, 24}) {
      const int64_t budget = total(target);
      int64_t expected = 0;
      for (int64_t b = 1; b <= 2 * target + 40; ++b) {
        if (total(b) <= budget) expected = b;
      }
      EXPECT_EQ(largest_batch(suite, pref, budget).batch, expected)
          << a->name() << " budget " << budget;
    }
  }
}

TEST(LargestBatch, IsZeroWithTheReasonWhenTheModelIsIncomplete) {
  const FakeAlgorithm none(
      "fake.none", [](const ConvProblem&, Pass) { return 0; },
      [](const ConvProblem&, Pass) { return Support::no("never"); });
  const BatchFit fit = largest_batch(two_layer_suite(), {&none}, int64_t{1} << 40);
  EXPECT_EQ(fit.batch, 0);
  EXPECT_FALSE(fit.memory.complete());
}

TEST(LargestBatch, RealAlgorithmsOnAlexNetAndAGtx970) {
  const std::vector<Layer> suite =
      read_shape_file(std::string(CONVLAB_SOURCE_DIR) + "/bench/suites/alexnet");
  const int64_t budget = card_database().get("gtx970").usable_bytes;
  for (const Algorithm* a : registry().all()) {
    if (!a->available() || a->name() == "reference") continue;
    const BatchFit fit = largest_batch(suite, {a, &registry().get("reference")}, budget, {}, 4096);
    SCOPED_TRACE(a->name());
    ASSERT_GT(fit.batch, 0);
    EXPECT_LE(network_memory(suite, fit.batch, {a, &registry().get("reference")}).total(), budget);
    if (!fit.capped) {
      EXPECT_GT(network_memory(suite, fit.batch + 1, {a, &registry().get("reference")}).total(),
                budget);
    }
    std::printf("alexnet on gtx970 (%s): largest batch %lld (%s of %s)\n", a->name().c_str(),
                static_cast<long long>(fit.batch), format_size(fit.memory.total()).c_str(),
                format_size(budget).c_str());
  }
}

}  // namespace
}  // namespace convlab
