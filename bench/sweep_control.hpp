#pragma once
// What the sweep controls add to `convbench run` around the case list: --vary (more layers), --shard and
// --devices' workers (fewer cases), --resume (the cases already in --out are skipped),
// --memory-budget/--card (a budget for the runner), --select (a row with the choice per
// layer and pass), SIGINT/SIGTERM (finish the row, stop cleanly) and the progress line.
// run_command.cpp calls these in order; each acts on data, not on the running loop.

#include <csignal>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cases.hpp"
#include "cli.hpp"
#include "context.hpp"
#include "convlab/cards.hpp"
#include "convlab/memory.hpp"
#include "reporters.hpp"
#include "row.hpp"

namespace convbench {

/// A 1-based part I of N.
struct Shard {
  int64_t index = 1;
  int64_t count = 1;
  std::string source;  ///< where it came from: "--shard 2/8" or the Slurm variables read
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

/// Parses "I/N" with 1 <= I <= N; UsageError naming `flag` otherwise.
Shard parse_shard(const std::string& text, const std::string& flag);

/// --shard when given, else SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (with
/// SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP when set: task ids MIN, MIN+STEP, ... are
/// shards 1, 2, ...), else none. A malformed variable is a UsageError naming it. The shard's
/// source says which of them decided it (the metadata's shard_source).
std::optional<Shard> resolve_shard(const std::optional<std::string>& flag);

/// The cases of the (layer, pass) groups that fall to `part`: group g (in sweep order) goes
/// to part g mod N + 1. Whole groups stay together, so --select sees every algorithm of a
/// layer and pass, and every case lands in exactly one part.
std::vector<Case> take_part(const std::vector<Case>& cases, const Shard& part);

/// One --vary FIELD=START:STOP[:STEP] axis: STEP is +N (default 1) or *N.
struct VaryAxis {
  std::string field;
  std::vector<int64_t> values;
  std::string text;  ///< as given
};
/// Parses one --vary; UsageError naming the bad part. Fields are benchdnn keys (mb, g, ic,
/// ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw).
VaryAxis parse_vary(const std::string& text);

/// UsageError when `bases` x the product of the axes' lengths (each combination at least one
/// case) exceeds `max_cases`, before any combination is made.
void check_vary_size(std::size_t bases, const std::vector<VaryAxis>& axes, int64_t max_cases);

/// The Cartesian product of the axes over each base descriptor: every combination as a
/// descriptor whose name lists the values ("kh=5 ih=32"). Combinations that are no valid
/// convolution go to `skipped` with the reason, not into the result.
std::vector<std::string> expand_vary(const std::vector<std::string>& bases,
                                     const std::vector<VaryAxis>& axes,
                                     std::vector<std::string>& skipped);

/// The identity of a row for --resume and merge: descriptor, pass, algorithm and device.
std::string case_key(const std::string& descriptor, const std::string& pass,
                     const std::string& algorithm, const std::string& device);

/// A convbench CSV read back (for --resume and merge).
struct SweepFile {
  std::string path;
  std::vector<std::pair<std::string, std::string>> meta;  ///< the "# key: value" lines
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  ///< complete rows only
  std::size_t complete_bytes = 0;              ///< up to the end of the last complete row
  std::size_t torn_bytes = 0;  ///< after it: a row cut short by a kill (0 when none)
  /// The value of a metadata key, or nullptr.
  const std::string* meta_value(const std::string& key) const;
  /// The column of that name, or -1.
  int column(const std::string& name) const;
  /// case_key of row i.
  std::string key(std::size_t row) const;
};

/// Row i of a file as a Row (by column name; unknown columns ignored, bad numbers absent).
Row row_from_file(const SweepFile& file, std::size_t i);

/// Reads a convbench CSV. A last row without its line break, or with the wrong number of
/// fields, is torn (counted in torn_bytes); any other malformed row is an Error{io} naming
/// the file and line. Error{io} when the file cannot be read or has no header.
SweepFile read_sweep_file(const std::string& path);

/// Metadata keys that legitimately differ between runs of one sweep (when, where, how it
/// was started, which part), ignored when --resume and merge compare settings.
bool per_run_key(const std::string& key);

/// The first setting in which `a` and `b` differ, as "KEY: 'x' vs 'y'", or "" when none. The
/// case list (sweep_cases, sweep_digest) is compared after every other setting, so that the
/// message names the setting that changed the cases when there is one.
/// `case_list` false leaves the case list out (merge of whole sweeps of different layers).
std::string settings_difference(const SweepFile& a, const SweepFile& b, bool case_list = true);

/// The identity of a case as its row and case_key give it: suite|layer|descriptor|pass|
/// algorithm|device.
std::string case_identity(const Case& c);

/// The key of the first row of `file` (select rows aside) that is no case of `sweep`, or "".
std::string row_outside_sweep(const SweepFile& file, const std::vector<Case>& sweep);

/// Adds the sweep keys to the metadata: always sweep_cases (all cases of the sweep, before
/// --shard and --resume) and sweep_digest (a hash of their identities and knobs: the sweep's
/// identity, which --resume and merge compare with every other setting); the others only
/// when their flag is in use: vary, memory_budget, select, and for a part of a sweep
/// (--shard or a --devices worker) shard, worker and shard_cases (the cases of this part).
struct Budget;
void add_sweep_context(Context& context, const RunOptions& options,
                       const std::optional<Budget>& budget, const std::optional<Shard>& shard,
                       const std::optional<Shard>& worker, const std::vector<Case>& sweep,
                       const std::vector<Case>& part);

/// The metadata and header a run with `context` writes, as a SweepFile (to compare with one
/// read back).
SweepFile context_as_file(const Context& context);

/// The command that plots a sweep CSV (bench/plot_sweep.py).
std::string plot_command(const std::string& csv);

/// The --memory-budget / --card budget: the smaller when both are given.
struct Budget {
  int64_t bytes = 0;
  std::string label;  ///< e.g. "3.50 GiB (--memory-budget 3.5GiB)"
};
/// Parses the budget flags (loading --cards files first); UsageError for bad values.
std::optional<Budget> resolve_budget(const RunOptions& options, convlab::CardDatabase& cards);

/// Emits --select rows: collects each (layer, pass) group's rows and, once the group is
/// complete, adds a row with algorithm "select" naming the fastest measured algorithm that
/// fits the budget (convlab::select), its time and memory.
class SelectTracker {
 public:
  /// `cases` is the whole sweep (before --shard and --resume), for the group sizes.
  SelectTracker(const std::vector<Case>& cases, std::optional<Budget> budget);
  /// A row of the sweep (run now or read back by --resume). Returns the select row when it
  /// completes its group.
  std::optional<Row> add(const Row& row);
  /// Marks the group of a select row read back by --resume as done.
  void already_written(const Row& select_row);

 private:
  struct Group {
    const Case* first = nullptr;
    std::set<std::string> expected;  ///< algorithm names
    std::vector<Row> rows;
    bool written = false;
  };
  Row select_row(const Group& group) const;
  std::map<std::string, Group> groups_;  ///< by descriptor + pass
  std::optional<Budget> budget_;
};

/// SIGINT and SIGTERM set a flag (the running case finishes and its row is written) and
/// restore the default action, so a second signal stops at once.
void install_interrupt_handlers();
bool interrupted();
/// The signal that interrupted the sweep (SIGINT or SIGTERM), 0 when none.
int interrupt_signal();

/// A progress line on stderr, rewritten in place: case i/n, layer, pass, algorithm,
/// elapsed, estimated remaining. Only made when stderr is a terminal.
std::unique_ptr<Reporter> make_progress_reporter(std::size_t cases);

}  // namespace convbench
