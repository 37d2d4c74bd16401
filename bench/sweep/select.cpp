// The --select rows, built from a layer and pass's rows (sweep/select.hpp).
#include "sweep/select.hpp"

#include <algorithm>
#include <limits>

#include "convlab/error.hpp"
#include "convlab/memory.hpp"
#include "convlab/registry.hpp"
#include "sweep/sweep_identity.hpp"

namespace convbench {

SelectTracker::SelectTracker(const std::vector<Case>& cases, std::optional<Budget> budget)
    : budget_(std::move(budget)) {
  for (const Case& c : cases) {
    Group& g = groups_[group_key(c.suite, c.layer.name, c.layer.problem.descriptor(),
                                 convlab::to_string(c.pass))];
    if (!g.first) g.first = &c;
    g.expected.insert(c.algorithm->name());
  }
}

void SelectTracker::already_written(const Row& r) {
  auto it = groups_.find(group_key(r.suite, r.layer, r.descriptor, r.pass));
  if (it != groups_.end()) it->second.written = true;
}

std::optional<Row> SelectTracker::add(const Row& row) {
  auto it = groups_.find(group_key(row.suite, row.layer, row.descriptor, row.pass));
  if (it == groups_.end() || row.algorithm == "select") return std::nullopt;
  Group& g = it->second;
  g.rows.push_back(row);
  std::set<std::string> seen;
  for (const Row& r : g.rows) seen.insert(r.algorithm);
  if (g.written || seen != g.expected) return std::nullopt;
  g.written = true;
  return select_row(g);
}

Row SelectTracker::select_row(const Group& g) const {
  const Case& c = *g.first;
  Row out = g.rows.front();
  out.algorithm = "select";
  out.status = Status::ok;
  out.reason.clear();
  out.plan_ms = out.time_ms = out.time_ms_min = out.time_ms_max = out.gflops = std::nullopt;
  out.cv = std::nullopt;
  out.reps = out.workspace_bytes = out.total_bytes = std::nullopt;
  out.max_abs_err = out.max_rel_err = std::nullopt;
  out.plan_kernel = out.plan_transform = out.plan_tile = out.plan_workspace_split = "";
  out.plan_details = out.knobs = out.math_mode = out.family = "";
  convlab::TimingTable timings;
  convlab::SelectOptions options;
  for (const Row& r : g.rows) {
    if (r.algorithm == "reference") continue;
    options.candidates.push_back(&convlab::registry().get(r.algorithm));
    if (r.status == Status::ok && r.time_ms && *r.time_ms > 0) {
      timings.add(c.layer.problem, c.pass, r.algorithm, *r.time_ms);
    }
  }
  const int64_t budget = budget_ ? budget_->bytes : std::numeric_limits<int64_t>::max();
  const std::string within = budget_ ? " within " + budget_->label : "";
  if (options.candidates.empty() || timings.size() == 0) {
    const bool refused = std::any_of(g.rows.begin(), g.rows.end(),
                                     [](const Row& r) { return r.status == Status::over_budget; });
    out.status = refused ? Status::over_budget : Status::unsupported;
    out.reason = refused ? "nothing fits" + within
                         : "nothing to choose from: no algorithm of this layer and pass ran";
    return out;
  }
  try {
    const convlab::Selection s =
        convlab::select(c.layer.problem, c.pass, budget, &timings, options);
    if (!s.chosen) {
      out.status = Status::over_budget;
      out.reason = "nothing fits" + within + ": " + s.describe();
      return out;
    }
    for (const Row& r : g.rows) {
      if (r.algorithm != s.chosen->name()) continue;
      out.device = r.device;
      out.plan_ms = r.plan_ms, out.time_ms = r.time_ms, out.time_ms_min = r.time_ms_min;
      out.time_ms_max = r.time_ms_max, out.reps = r.reps, out.gflops = r.gflops;
      out.cv = r.cv;
      out.workspace_bytes = r.workspace_bytes, out.total_bytes = r.total_bytes;
      out.plan_kernel = r.plan_kernel, out.plan_transform = r.plan_transform;
      out.plan_tile = r.plan_tile, out.plan_workspace_split = r.plan_workspace_split;
      out.plan_details = r.plan_details, out.knobs = r.knobs;
      out.math_mode = r.math_mode, out.family = r.family;
    }
    out.reason = "chose " + s.describe() + within;
  } catch (const convlab::Error& e) {
    out.status = Status::error;
    out.reason = std::string("select: ") + e.what();
  }
  return out;
}

}  // namespace convbench
