// The sampled check (--check=sampled[:N]): the reference's single-point sums agree with its
// whole-tensor loops, the sample is seeded, distinct and in range, a wrong element that is
// sampled fails the check under the same bound as the full check, and the full and sampled
// verdicts agree on real algorithms' outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "cpu_reference/reference.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::problem;

constexpr double kEps = std::numeric_limits<float>::epsilon() / 2;

// The reference's output for the inputs, whole.
std::vector<float> reference_output(const ConvProblem& p, Pass pass, HostTensors t) {
  switch (pass) {
    case Pass::forward:
      reference::forward(p, t.x.data(), t.w.data(), t.y.data());
      break;
    case Pass::backward_data:
      reference::backward_data(p, t.y.data(), t.w.data(), t.x.data());
      break;
    case Pass::backward_filter:
      reference::backward_filter(p, t.x.data(), t.y.data(), t.w.data());
      break;
  }
  return t.output(pass);
}

reference::Point point(const ConvProblem& p, Pass pass, const HostTensors& t, int64_t i) {
  switch (pass) {
    case Pass::forward:
      return reference::forward_at(p, t.x.data(), t.w.data(), i);
    case Pass::backward_data:
      return reference::backward_data_at(p, t.y.data(), t.w.data(), i);
    case Pass::backward_filter:
      break;
  }
  return reference::backward_filter_at(p, t.x.data(), t.y.data(), i);
}

TEST(ReferencePoints, EqualTheWholeTensorLoopsOnEveryElement) {
  const uint64_t seed = testing::run_seed();
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::random_problems(seed, 6)) problems.push_back(p);
  for (const ConvProblem& p : problems)
    for (Pass pass : all_passes()) {
      const HostTensors t = make_inputs(p, pass, seed);
      const std::vector<float> whole = reference_output(p, pass, t);
      for (size_t i = 0; i < whole.size(); ++i) {
        // The same sum in the same order: bitwise equal once rounded to float.
        ASSERT_EQ(static_cast<float>(point(p, pass, t, int64_t(i)).value), whole[i])
            << p.descriptor() << " " << to_string(pass) << " element " << i << " seed " << seed;
      }
    }
}

TEST(ReferencePoints, RefuseAnIndexOutsideTheOutput) {
  const ConvProblem p = problem("mb2ic3ih5oc4kh3");
  const HostTensors t = make_inputs(p, Pass::forward, 1);
  EXPECT_THROW(reference::forward_at(p, t.x.data(), t.w.data(), p.y_elems()), Error);
  EXPECT_THROW(reference::backward_filter_at(p, t.x.data(), t.y.data(), -1), Error);
}

TEST(SampledIndices, AreSeededDistinctAscendingAndInRange) {
  const std::vector<int64_t> a = sampled_indices(1000000, 1000, 7);
  EXPECT_EQ(a.size(), 1000u);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), a.size());
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_GE(a.front(), 0);
  EXPECT_LT(a.back(), 1000000);
  EXPECT_EQ(a, sampled_indices(1000000, 1000, 7));
  EXPECT_NE(a, sampled_indices(1000000, 1000, 8));
  // They spread over the tensor rather than bunching at one end.
  EXPECT_LT(a.front(), 10000);
  EXPECT_GT(a.back(), 990000);
  const std::vector<int64_t> all = sampled_indices(50, 1000, 7);
  ASSERT_EQ(all.size(), 50u);
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(all[size_t(i)], i);
}

TEST(CheckScope, ParsesAndDescribes) {
  EXPECT_EQ(parse_check_scope("").kind, CheckScope::Kind::automatic);
  EXPECT_EQ(parse_check_scope("auto").describe(), "auto");
  EXPECT_EQ(parse_check_scope("full").describe(), "full");
  EXPECT_EQ(parse_check_scope("sampled").describe(),
            "sampled:" + std::to_string(CheckScope::kDefaultSamples));
  EXPECT_EQ(parse_check_scope("sampled:25").samples, 25);
  for (const char* bad : {"sampled:", "sampled:0", "sampled:-3", "sampled:x", "sample", "Full",
                          "sampled:99999999999999"}) {
    try {
      parse_check_scope(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  // auto: full while the reference is cheap, sampled beyond.
  const CheckScope automatic;
  EXPECT_TRUE(automatic.full(problem("mb2ic16ih14oc16kh3ph1"), Pass::forward));
  EXPECT_FALSE(automatic.full(problem("mb32ic64ih56oc64kh3ph1"), Pass::backward_filter));
  EXPECT_TRUE(parse_check_scope("full").full(problem("mb32ic64ih56oc64kh3ph1"), Pass::forward));
  EXPECT_FALSE(parse_check_scope("sampled:5").full(problem("mb1ic1ih3oc1kh1"), Pass::forward));
}

// An error of `scale` times the element's own elementwise bound, at element i.
std::vector<float> with_error(std::vector<float> out, int64_t i, double bound_i, double scale) {
  out[size_t(i)] = static_cast<float>(out[size_t(i)] + scale * bound_i);
  return out;
}

TEST(SampledCheck, CatchesOneWrongSampledElementAtTheFullChecksBound) {
  const uint64_t seed = testing::run_seed();
  const ErrorBound elementwise{ErrorBound::Kind::elementwise, 8.0, 0.0};
  for (const char* d : {"g2mb2ic4ih11oc6kh3ph1sh2dh1", "mb1ic3ih9iw7oc4kh3kw2"})
    for (Pass pass : all_passes()) {
      const ConvProblem p = problem(d);
      const HostTensors t = make_inputs(p, pass, seed);
      const std::vector<float> good = reference_output(p, pass, t);
      // A sampled element with products. The dilated, strided kernel leaves four in five dx
      // elements untouched (exactly zero, with a zero bound), so one sample in a hundred
      // holds none of the others: the next sample seed is drawn until one does.
      int64_t i = -1;
      uint64_t sample_seed = seed;
      for (int draw = 0; draw < 64 && i < 0; ++draw) {
        sample_seed = seed + uint64_t(draw);
        for (int64_t s : sampled_indices(int64_t(good.size()), 20, sample_seed)) {
          if (point(p, pass, t, s).magnitude > 0) i = s;
        }
      }
      ASSERT_GE(i, 0) << d << " " << to_string(pass) << ", seed " << seed;
      const AccuracyReport clean =
          compare_sampled_with_reference(p, pass, t, good, elementwise, 20, sample_seed);
      EXPECT_TRUE(clean.within_bound) << clean.detail;
      EXPECT_EQ(clean.checked, 20);
      const double bound_i = 8.0 * kEps * point(p, pass, t, i).magnitude;
      // Twice the bound fails, as it would in the full check; a third of it passes.
      const AccuracyReport bad = compare_sampled_with_reference(
          p, pass, t, with_error(good, i, bound_i, 2.0), elementwise, 20, sample_seed);
      EXPECT_FALSE(bad.within_bound) << d << " " << to_string(pass) << ": " << bad.detail;
      EXPECT_FALSE(
          compare_with_reference(p, pass, t, with_error(good, i, bound_i, 2.0), elementwise)
              .within_bound);
      EXPECT_TRUE(compare_sampled_with_reference(p, pass, t, with_error(good, i, bound_i, 0.3),
                                                 elementwise, 20, sample_seed)
                      .within_bound);
      std::vector<float> nan = good;
      nan[size_t(i)] = std::numeric_limits<float>::quiet_NaN();
      EXPECT_EQ(
          compare_sampled_with_reference(p, pass, t, nan, elementwise, 20, sample_seed).nonfinite,
          1);
    }
}

TEST(SampledCheck, WithAsManySamplesAsOutputsEverySingleWrongElementFails) {
  const uint64_t seed = testing::run_seed();
  const ErrorBound normwise{ErrorBound::Kind::normwise, 4.0, 6.0};
  const ErrorBound elementwise;
  const ConvProblem p = problem("g2mb2ic2ih5oc4kh3ph1");
  for (Pass pass : all_passes()) {
    const HostTensors t = make_inputs(p, pass, seed);
    const std::vector<float> good = reference_output(p, pass, t);
    const int64_t n = int64_t(good.size());
    for (int64_t i = 0; i < n; ++i) {
      std::vector<float> bad = good;
      bad[size_t(i)] += 0.01f;
      for (const ErrorBound& b : {elementwise, normwise}) {
        EXPECT_FALSE(compare_sampled_with_reference(p, pass, t, bad, b, n, seed).within_bound)
            << to_string(pass) << " element " << i << " under " << b.describe();
      }
    }
  }
}

TEST(SampledCheck, AgreesWithTheFullCheckOnRealAlgorithms) {
  const uint64_t seed = testing::run_seed();
  for (const Algorithm* a : registry().match("cpu.*")) {
    if (!a->available()) continue;
    for (const ConvProblem& p : testing::random_problems(seed, 4))
      for (Pass pass : all_passes()) {
        if (!a->supports(p, pass)) continue;
        const HostTensors t = make_inputs(p, pass, seed);
        HostTensors run = t;
        auto plan = a->plan(p, pass);
        std::vector<unsigned char> ws(plan->workspace_bytes() + 1);
        plan->run({run.x.data(), run.w.data(), run.y.data()}, {ws.data(), ws.size()});
        const std::vector<float>& out = run.output(pass);
        const ErrorBound bound = plan->error_bound();
        const AccuracyReport full = compare_with_reference(p, pass, t, out, bound);
        const AccuracyReport sampled =
            compare_sampled_with_reference(p, pass, t, out, bound, 200, seed);
        EXPECT_TRUE(full.within_bound) << a->name() << " " << full.detail;
        EXPECT_TRUE(sampled.within_bound) << a->name() << " " << sampled.detail;
        // Fewer elements show no larger a worst error, but against the exact double sum
        // rather than the reference's float output: up to half an ulp of it more.
        double largest = 0;
        for (float v : reference_output(p, pass, t))
          largest = std::max(largest, double(std::fabs(v)));
        EXPECT_LE(sampled.max_abs_err, full.max_abs_err + kEps * largest) << a->name();
      }
  }
}

}  // namespace
}  // namespace convlab
