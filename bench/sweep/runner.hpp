#pragma once
// Runs one case the way the tests do (convlab/harness.hpp): supports -> plan (timed) ->
// inputs from the case seed -> CaseBuffers (output and workspace poisoned) -> warm-up ->
// timed repetitions (DeviceContext::time_ms: steady clock on the CPU, CUDA events on a GPU)
// -> optional comparison with the reference -> optional dump. Never throws for a failing
// case: the row says what happened.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/cases.hpp"
#include "convlab/accuracy.hpp"
#include "output/row.hpp"

namespace convbench {

class Dumper;
class InputCache;

struct RunSettings {
  int reps = 5;          ///< timed repetitions (>= 1)
  int warmup = 1;        ///< untimed runs before them (>= 0)
  double max_time = 2.0;  ///< stop repeating once timed runs add up to this (s); 0 = never
  bool check = false;    ///< compare with the reference under the algorithm's error bound
  convlab::CheckScope check_scope;  ///< how much of each output (--check=full|sampled[:N])
  uint64_t seed = 1;     ///< sweep seed; each case derives its own (case_seed)
  Dumper* dumper = nullptr;  ///< --dump, when given
  /// Shares the inputs of a layer and pass between its algorithms; none = made per case from
  /// `seed` with the default fill.
  InputCache* inputs = nullptr;
  /// --memory-budget / --card: a case whose tensors + workspace exceed it is over_budget,
  /// not run; `budget_label` names it in the reason (e.g. "gtx970 usable 3.50 GiB").
  std::optional<int64_t> budget;
  std::string budget_label;
};

/// The identity columns of a case's row (suite, layer, descriptor, pass, algorithm, device).
Row make_row(const Case& c);

/// Runs the case and returns its row: ok, unsupported (with the reason), or error (with what
/// was thrown, or "accuracy: ..." when --check finds the output outside its error bound).
Row run_case(const Case& c, const RunSettings& settings);

/// Runs the cases with their timed repetitions in turns (--interleave): each is planned, its
/// buffers made and warmed up, then one repetition of each in their order, round after
/// round, until each has its --reps or --max-time; then each is checked and dumped. A slow
/// spell of a shared machine so falls on all of them alike, and a ratio of their medians
/// compares times taken side by side. Their buffers are all held until the end (each case's
/// host memory check sees the others'). The rows come back in the cases' order, each as
/// run_case would have made it; one case that fails does not stop the others.
std::vector<Row> run_cases(const std::vector<Case>& cases, const RunSettings& settings);

/// Median of the timings (mean of the middle two for an even count).
double median(std::vector<double> values);

}  // namespace convbench
