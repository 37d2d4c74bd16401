#pragma once
// The command line: subcommands and their options (CLI11). Each subcommand's options land in
// one plain struct that its command (commands/commands.hpp) validates and runs; every flag is
// declared once, in options/cli.cpp, and a flag two subcommands share (the layer selection,
// --format, --out) by one function. Adding a subcommand is one more struct, one
// add_*_command and one run_* function.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "options/calibration_flags.hpp"

namespace convbench {

/// Bad input (a flag value, a file, a name): main prints the message on one line and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ListOptions {
  std::string format = "table";  ///< table or json
};

/// The layer, algorithm and pass selection that run, memory and predict share.
struct LayerOptions {
  std::vector<std::string> shapes;
  std::vector<std::string> batch_files;
  std::vector<std::string> suites;
  std::optional<int64_t> mb;
  std::optional<std::string> algos;
  std::optional<std::string> match;  ///< --match REGEX on layer names
  std::string passes = "fwd,bwd_data,bwd_filter";
};

struct RunOptions : LayerOptions {
  int reps = 5;
  int warmup = 1;
  double max_time = 2.0;  ///< seconds of timed runs after which a case stops repeating
  /// --interleave: the algorithms of a layer and pass take their repetitions in turns
  bool interleave = false;
  bool check = false;
  std::string check_scope;  ///< --check's value: auto, full, sampled[:N]; empty without --check
  std::optional<std::string> format;  ///< stdout format; table when not given
  std::optional<std::string> out;
  uint64_t seed = 1;
  std::optional<std::string> dump;
  std::vector<std::string> knobs;  ///< --knob ALGO.KNOB=VALUE (repeatable)
  std::string fill = "random";     ///< --fill random|integers|nan@I|inf@I
  // Sweep controls (sweep/ applies them).
  std::optional<std::string> memory_budget;  ///< --memory-budget SIZE
  std::optional<std::string> card;           ///< --card ID: its usable memory is the budget
  std::vector<std::string> cards;            ///< --cards FILE.json: more cards
  bool select = false;                       ///< --select: a row with the choice per layer
  bool resume = false;                       ///< --resume: skip the cases already in --out
  std::optional<std::string> shard;          ///< --shard I/N (default from SLURM_ARRAY_*)
  std::vector<std::string> vary;             ///< --vary FIELD=START:STOP[:STEP]
  int64_t max_cases = 10000;                 ///< --max-cases: the largest sweep run unasked
  std::optional<std::string> devices;        ///< --devices 0,1: one worker per device
  std::optional<std::string> device;         ///< --device N: the `device` knob of every algorithm
  std::optional<std::string> worker;         ///< --worker d/D: set by --devices for a worker
  std::vector<std::string> argv;             ///< the command line, for --devices' workers
  bool dry_run = false;          ///< --dry-run: list the cases with their memory, run nothing
  CalibrationFlags calibration;  ///< --calibrate...: the dry run's time estimates
};

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
  CalibrationFlags calibration;  ///< --calibrate, --calibrate-card, --calibrate-device
  std::optional<std::string> format;
  std::optional<std::string> out;
};

struct MergeOptions {
  std::string out;
  std::vector<std::string> inputs;
  bool allow_incomplete = false;
};

struct CompareOptions {
  std::string a;  ///< the baseline sweep file
  std::string b;  ///< the one measured against it
  double alpha = 0.05;
  std::optional<std::string> format;  ///< table (default), csv, json
  std::optional<std::string> out;     ///< FILE.csv or FILE.json
};

/// A flag value that must be a non-negative integer; UsageError naming `what` otherwise.
int64_t parse_count(const std::string& text, const std::string& what);

/// Help text for an option given once per value (`--shape A --shape B`): CLI11 would print
/// `PLACEHOLDER ...`, which reads as `--shape A B`, a syntax the parser refuses.
inline CLI::Option* repeatable(CLI::Option* option, const std::string& placeholder) {
  const std::string flag = option->get_name();
  return option->option_text(placeholder + "  (repeat: " + flag + " A " + flag + " B)");
}

CLI::App* add_list_command(CLI::App& app, ListOptions& options);
CLI::App* add_run_command(CLI::App& app, RunOptions& options);
CLI::App* add_memory_command(CLI::App& app, MemoryOptions& options);
CLI::App* add_predict_command(CLI::App& app, PredictOptions& options);
CLI::App* add_merge_command(CLI::App& app, MergeOptions& options);
CLI::App* add_compare_command(CLI::App& app, CompareOptions& options);

}  // namespace convbench
