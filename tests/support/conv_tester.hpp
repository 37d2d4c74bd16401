#pragma once
// The test corpus and the one check every algorithm test uses: fresh seeded inputs, the
// output and workspace poisoned, the result compared with the reference under the
// algorithm's own error bound. Shapes are data; the seed is printed with every failure.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"

namespace convlab::testing {

/// The seed of this test run: CONVLAB_TEST_SEED if set, else fresh from the clock.
uint64_t run_seed();

/// The problem a benchdnn descriptor ("mb2ic3ih9oc4kh3ph1") names, read by the library's
/// parser: test problems are written as descriptors, never as positional tuples.
ConvProblem problem(std::string_view descriptor);
/// The problems of a benchdnn shape file, in file order.
std::vector<ConvProblem> problems_from(const std::string& shape_file);

/// Hand-picked edge cases (tests/data/edge_cases): 1x1, kernel = padded input, stride >
/// kernel, asymmetric H/W, dilation, groups (depthwise too), N = 1, C = 1, odd sizes,
/// padding >= kernel, and end paddings unlike the start ones (benchdnn's deduction from
/// oh/ow, and set in code).
std::vector<ConvProblem> edge_cases();
/// Seeded random valid problems: sizes up to 40, kernels up to 11, strides and dilations up
/// to 3, groups up to 4, padding up to the kernel.
std::vector<ConvProblem> random_problems(uint64_t seed, int count);
/// Every layer of every built-in suite (bench/suites), shrunk to a test size while keeping
/// its kernel, stride, padding, dilation and groups.
std::vector<ConvProblem> scaled_suite_layers();
/// Shrinks one layer as scaled_suite_layers() does.
ConvProblem scaled_down(const ConvProblem& layer);

enum class Disposition { passed, unsupported, failed };

struct CaseOutcome {
  Disposition disposition = Disposition::passed;
  std::string message;  ///< the reason (unsupported) or what went wrong (failed)
  AccuracyReport report;
};

/// Plans (with `knobs`) and runs one case on the algorithm's device and compares it with the
/// reference under the plan's error bound (exact for integer fills).
CaseOutcome check_case(const Algorithm& algorithm, const ConvProblem& problem, Pass pass,
                       uint64_t seed, Fill fill = Fill::uniform, const KnobValues& knobs = {});

/// Tallies of a corpus run, for the summary line each test prints.
struct CorpusSummary {
  int passed = 0, unsupported = 0, failed = 0;
  std::vector<std::string> failures;  ///< one line per failed case (descriptor, pass, why)
  std::vector<std::string> unsupported_reasons;
};

/// check_case over problems x passes; an unsupported case must come with a non-empty reason
/// (an empty one counts as a failure).
CorpusSummary check_corpus(const Algorithm& algorithm, const std::vector<ConvProblem>& problems,
                           const std::vector<Pass>& passes, uint64_t seed,
                           Fill fill = Fill::uniform, const KnobValues& knobs = {});

/// Prints "<algorithm> <label>: N passed, N unsupported, N failed (seed S)" and the first
/// failures; returns true when nothing failed. Tests wrap it in EXPECT_TRUE.
bool report_corpus(const std::string& algorithm, const std::string& label,
                   const CorpusSummary& summary, uint64_t seed);

/// All three passes.
const std::vector<Pass>& all_passes();

/// Why this build lacks the algorithm `name` (the registry's reason for the missing entry
/// that matches it, e.g. "not built: oneDNN (libdnnl-dev) was not found at configure time"),
/// or "" when it is built. A test of an optional backend skips with this reason instead of
/// failing on the name.
std::string not_built_reason(std::string_view name);

/// Inputs of `pass` broken the way a real bug breaks a result, to show an error bound is
/// tight enough to catch one: forward and backward-data lose the largest tap of every filter
/// (a dropped term in every output, never one a random filter holds near zero),
/// backward-filter the bottom half of every dy plane (a lost chunk of tiles or rows).
HostTensors with_a_lost_term(const ConvProblem& problem, Pass pass, HostTensors inputs);

}  // namespace convlab::testing

/// Skips the current test, with the registry's reason, when `name` is not built here.
#define CONVLAB_SKIP_UNLESS_BUILT(name)                                                 \
  if (const std::string convlab_not_built = ::convlab::testing::not_built_reason(name); \
      !convlab_not_built.empty())                                                       \
  GTEST_SKIP() << (name) << ": " << convlab_not_built
