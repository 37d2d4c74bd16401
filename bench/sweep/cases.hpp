#pragma once
// The sweep as a list of cases, built (and validated) completely before anything runs, so
// that bad input fails before an output file is touched, and so that filters over the list
// (--shard, --resume, --vary, budgets) act on data rather than on a running loop.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/problem.hpp"
#include "options/cli.hpp"

namespace convbench {

/// The batch of the default sweep (no --suite, --shape or --batch-file): the
/// convnet-benchmarks layers at a batch that keeps every algorithm and pass at a few minutes
/// on two cores (docs/convbench.md has the measurement).
constexpr int64_t kDefaultSweepMb = 16;

/// A layer and where it came from.
struct SweepLayer {
  std::string suite;     ///< suite name, --batch-file path as given, or "" for --shape
  convlab::Layer layer;  ///< the problem with --mb applied
};

/// What to sweep: the layer selection as the command line gave it (with --vary's shapes in
/// place of the base ones), and what is derived from it.
struct SweepSpec {
  LayerOptions layers;
  std::vector<convlab::Pass> passes;  ///< --passes parsed (never empty)
  bool check = false;                 ///< --check (the default set then includes reference)
  /// --max-cases: build_cases refuses a larger sweep before making its cases.
  std::optional<int64_t> max_cases;
};

/// The sweep of a layer selection (memory, predict); UsageError for bad passes.
SweepSpec layer_spec(const LayerOptions& layers);

/// One (layer, pass, algorithm) of the sweep.
struct Case {
  std::size_t index = 0;        ///< position in the sweep, from 0
  std::size_t layer_index = 0;  ///< position of its layer in the sweep, from 0
  std::string suite;
  convlab::Layer layer;
  convlab::Pass pass = convlab::Pass::forward;
  const convlab::Algorithm* algorithm = nullptr;
  /// The knobs given for this case's algorithm (--knob, and the device of --devices); the
  /// algorithm resolves the rest. Validated before the sweep starts.
  convlab::KnobValues knobs;
  /// suite|layer|descriptor|pass|algorithm|device, made once with the case: the key of its
  /// row in an output file (SweepFile::key), by which --resume, the sweep digest and
  /// row_outside_sweep know it.
  std::string identity;
};

/// Whether two cases are of the same layer and pass: build_cases puts such cases side by side,
/// and --interleave runs each such neighbourhood as one group.
bool same_layer_and_pass(const Case& a, const Case& b);

/// The layers of the sweep in command-line order: suites, then batch files, then shapes; the
/// default sweep when none is given. Throws convlab::Error for an unknown suite, an
/// unreadable or malformed batch file, or a bad descriptor.
std::vector<SweepLayer> collect_layers(const SweepSpec& spec);

/// The algorithms of the sweep: --algos matched against the registry (unavailable ones
/// included, so they show as unsupported with the reason), or by default every available
/// algorithm except the slow reference, which joins when --check is given.
std::vector<const convlab::Algorithm*> select_algorithms(const SweepSpec& spec);

/// Parses --passes ("fwd,bwd_data,bwd_filter"); throws Error{invalid_argument}.
std::vector<convlab::Pass> parse_passes(const std::string& text);

/// layers x passes x algorithms, layer-major, so the rows of one layer and pass sit together.
/// Error{invalid_argument} when there are more than spec.max_cases, counted before any case
/// is made (a 100000-line shape file times every algorithm would take gigabytes).
std::vector<Case> build_cases(const SweepSpec& spec);

/// The seed of a case's inputs: a hash of the sweep seed, the descriptor and the pass, so every
/// algorithm of a layer and pass sees the same inputs, whatever the order, shard or resume.
uint64_t case_seed(uint64_t sweep_seed, const convlab::ConvProblem& problem, convlab::Pass pass);

}  // namespace convbench
