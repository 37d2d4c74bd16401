#pragma once
// One result row of `convbench run`: one (layer, pass, algorithm). Every reporter (table,
// CSV, JSON) writes the same row through the same column list, so a new column is one entry
// in row_columns() and appears in every format.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace convbench {

/// The disposition of a case (DESIGN.md, "convbench").
enum class Status {
  ok,           ///< ran (and, with --check, stayed within the algorithm's error bound)
  unsupported,  ///< the algorithm does not implement the problem or cannot run here
  over_budget,  ///< does not fit the memory budget (--memory-budget, --card)
  error,        ///< it threw, or --check found it outside its error bound
};
const char* to_string(Status status) noexcept;

struct Row {
  std::string suite;       ///< built-in suite name, --batch-file path, or "" for --shape
  std::string layer;       ///< the layer's name in its shape file ("" when unnamed)
  std::string descriptor;  ///< canonical benchdnn descriptor of the problem (no name)
  std::string pass;        ///< fwd, bwd_data, bwd_filter
  std::string algorithm;   ///< registry name
  std::string device;      ///< cpu or gpu
  Status status = Status::ok;
  std::string reason;      ///< why not ok (one line); empty when ok
  std::optional<double> plan_ms;      ///< Algorithm::plan wall time
  std::optional<double> time_ms;      ///< median of the timed repetitions
  std::optional<double> time_ms_min;
  std::optional<double> time_ms_max;
  std::optional<int64_t> reps;        ///< timed repetitions behind time_ms
  std::optional<double> cv;           ///< sample standard deviation / mean of the repetitions
  std::optional<double> gflops;       ///< direct-convolution flops / median time
  std::optional<int64_t> workspace_bytes;  ///< Plan::workspace_bytes()
  std::optional<int64_t> total_bytes;      ///< x + w + y + workspace on the device
  std::optional<double> max_abs_err;  ///< --check: max |y - ref|
  std::optional<double> max_rel_err;  ///< --check: max |y - ref| / sum|a||b|
  // What planning chose (convlab::PlanInfo), empty when the case did not get to plan.
  std::string plan_kernel;
  std::string plan_transform;
  std::string plan_tile;
  std::string plan_workspace_split;  ///< PlanInfo::format_workspace_split()
  std::string plan_details;          ///< PlanInfo::details as "name=value;..."
  std::string knobs;      ///< format_knobs of the knobs as resolved (by the plan when planned)
  std::string math_mode;  ///< the plan's math mode, else the algorithm's default one
  std::string family;     ///< AlgorithmInfo::family
};

/// A cell of a row: absent (empty in CSV, null in JSON), text, integer or real.
using Cell = std::variant<std::monostate, std::string, int64_t, double>;

struct Column {
  const char* name;          ///< CSV header / JSON key
  Cell (*get)(const Row&);   ///< the cell of a row
};

/// The columns of a row, in CSV order (docs/convbench.md documents each).
const std::vector<Column>& row_columns();

/// A real as written to CSV and tables: up to 6 significant digits, no trailing zeros.
std::string format_real(double value);
/// A predicted range for a table cell, to three digits (its ends are as uncertain as the
/// spread between them): "(9.1–15)".
std::string format_range(double low, double high);

/// Tallies of a sweep, for the summary line and the exit status.
struct Summary {
  int64_t ok = 0, unsupported = 0, over_budget = 0, error = 0;
  void add(const Row& row);
  int64_t total() const { return ok + unsupported + over_budget + error; }
  /// "15 cases: 15 ok, 0 unsupported, 0 over_budget, 0 error"
  std::string line() const;
};

}  // namespace convbench
