#pragma once
// The command line: subcommands and their options (CLI11). Each subcommand's options land in
// a plain struct that its command validates and runs; adding a subcommand (memory,
// predict, merge) is one more struct, one add_*_command and one run_* function.

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
  bool check = false;
  std::string check_scope;  ///< --check's value: auto, full, sampled[:N]; empty without --check
  std::optional<std::string> format;  ///< stdout format; table when not given
  std::optional<std::string> out;
  uint64_t seed = 1;
  std::optional<std::string> dump;
  std::vector<std::string> knobs;  ///< --knob ALGO.KNOB=VALUE (repeatable)
  std::string fill = "random";     ///< --fill random|integers|nan@I|inf@I
  // Sweep controls (options/research.hpp adds these flags; sweep/ applies them).
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

/// `convbench list`; returns the exit status.
int run_list(const ListOptions& options);
/// `convbench run`; returns the exit status (0 all rows ok or unsupported, 1 any error row).
/// Throws UsageError for bad input, before any output file is opened.
int run_sweep(const RunOptions& options, const std::string& command_line);

}  // namespace convbench
