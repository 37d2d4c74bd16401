#pragma once
// `convbench run --dry-run`: the cases a sweep would run, after --match, --shard, --resume
// and the budget, each with its memory (convlab::pass_memory, the model `convbench memory`
// prints) and, given --calibrate, its estimated time (convlab::predict, as `convbench
// predict` calibrates it). It runs no case and opens no output file.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "convlab/cards.hpp"
#include "options/cli.hpp"
#include "output/context.hpp"
#include "output/reporters.hpp"
#include "sweep/budgets.hpp"
#include "sweep/cases.hpp"

namespace convbench {

struct DryRunSettings {
  Format format = Format::table;  ///< on stdout
  int reps = 5;                   ///< as the run would repeat each case
  int warmup = 1;
  double max_time = 2.0;
  /// --interleave: the cases of a layer and pass hold their memory together
  bool interleave = false;
  std::optional<Budget> budget;
  /// --calibrate; none: no estimate. Each estimate is for the card it was measured on
  /// (`measured_on`), which is the machine the sweep is meant to run on again.
  const convlab::Calibration* calibration = nullptr;
  const convlab::Card* measured_on = nullptr;
  std::string calibration_text;  ///< describe_calibration(), for the metadata
};

/// UsageError for a flag combination a dry run refuses: --dry-run with --devices (the
/// workers split the cases; the list without --devices is the same), and the --calibrate
/// flags without --dry-run (a real run measures instead of estimating).
void check_dry_run_flags(const RunOptions& options);

/// The dry run of `convbench run`: prints the cases with report_dry_run. `calibration` is
/// load_calibration() of --calibrate, made from `cards` (which holds the --cards files' cards).
int run_dry(const RunOptions& options, const std::vector<Case>& cases, std::size_t sweep_size,
            const Context& context, const std::optional<Budget>& budget,
            const std::optional<convlab::Calibration>& calibration,
            const convlab::CardDatabase& cards, Format format);

/// Prints the cases (`sweep_size`: the whole sweep's, before --shard and --resume) in the
/// format; `context` is the run's metadata. Returns the exit status (0).
int report_dry_run(const std::vector<Case>& cases, std::size_t sweep_size, Context context,
                   const DryRunSettings& settings);

}  // namespace convbench
