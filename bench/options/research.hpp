#pragma once
// The issue-5 commands (memory, predict, merge) and the issue-5 flags of `run` (docs/convbench.md,
// docs/memory-model.md, docs/prediction.md, docs/cluster.md).

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "sweep/cases.hpp"
#include "options/cli.hpp"
#include "output/context.hpp"
#include "convlab/cards.hpp"
#include "output/output_file.hpp"

namespace convbench {

/// One row of the memory and predict reports: column name -> text.
using Fields = std::map<std::string, std::string>;
/// Writes `rows` as CSV: the context's `# key: value` lines, a header of `columns`, then
/// one line per row (a column a row lacks is empty).
void write_fields_csv(std::ostream& out, const Context& context,
                      const std::vector<std::string>& columns, const std::vector<Fields>& rows);

struct MemoryOptions {
  LayerOptions layers;
  std::vector<std::string> cards;  ///< --cards LIST|all|FILE.json (repeatable)
  std::optional<std::string> memory_budget;
  bool inference = false;
  int optimizer_states = 1;
  int64_t max_batch = 65536;
  std::optional<std::string> fallback;  ///< --fallback ALGO for cases a strategy lacks
  std::optional<std::string> format;
  std::optional<std::string> out;
};

struct PredictOptions {
  LayerOptions layers;
  std::vector<std::string> cards;  ///< default all
  CalibrationFlags calibration;    ///< --calibrate, --calibrate-card, --calibrate-device
  std::optional<std::string> format;
  std::optional<std::string> out;
};

struct MergeOptions {
  std::string out;
  std::vector<std::string> inputs;
  bool allow_incomplete = false;
};

/// The issue-5 flags of `convbench run`.
void add_research_run_options(CLI::App* run, RunOptions& options);

CLI::App* add_memory_command(CLI::App& app, MemoryOptions& options);
CLI::App* add_predict_command(CLI::App& app, PredictOptions& options);
CLI::App* add_merge_command(CLI::App& app, MergeOptions& options);

/// `convbench memory`, `predict`, `merge`; each returns the exit status and throws
/// UsageError for bad input.
int run_memory(const MemoryOptions& options, const std::string& command_line);
int run_predict(const PredictOptions& options, const std::string& command_line);
int run_merge(const MergeOptions& options, const std::string& command_line);

// Shared by memory and predict.

/// The sweep spec of a layer selection (UsageError for bad passes).
SweepSpec layer_spec(const LayerOptions& options);

/// --cards values: ids, comma lists, "all", or FILE.json files (whose cards are added to
/// `db` and selected). `fallback` is used when no value was given ("" = none).
std::vector<const convlab::Card*> resolve_cards(const std::vector<std::string>& values,
                                                convlab::CardDatabase& db,
                                                const std::string& fallback);

/// The --cards values that name files (FILE.json), as inputs that no --out may overwrite.
std::vector<InputPath> card_file_inputs(const std::vector<std::string>& values);

/// Prints rows of cells as an aligned table (numbers right-aligned).
void print_table(std::ostream& out, const std::vector<std::string>& titles,
                 const std::vector<std::vector<std::string>>& rows);

}  // namespace convbench
