#include "sweep/dry_run.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include "convlab/memory.hpp"
#include "options/calibration_flags.hpp"
#include "output/fields.hpp"
#include "output/report.hpp"
#include "output/row.hpp"
#include "output/table.hpp"
#include "sweep/runner.hpp"

namespace convbench {

namespace {

const std::vector<FieldColumn>& dry_run_columns() {
  static const std::vector<FieldColumn> columns = columns_of({
      {FieldType::integer, {"index"}},
      {FieldType::text, {"suite", "layer", "descriptor", "pass", "algorithm", "device", "knobs"}},
      // The memory, as `convbench memory` gives it.
      {FieldType::text, {"source", "reason"}},
      {FieldType::integer, {"x_bytes", "w_bytes", "y_bytes", "workspace_bytes", "total_bytes"}},
      {FieldType::text, {"over_budget"}},
      // The estimate, its range after the point as in `convbench predict`.
      {FieldType::real, {"estimated_ms", "estimated_ms_low", "estimated_ms_high"}},
  });
  return columns;
}

// The milliseconds a case would take in the sweep at `run_ms` a run: the warm-up runs, then
// timed runs until --reps or until they add up to --max-time (at least one), as the runner
// repeats them. Planning, inputs and --check are not counted.
double sweep_ms(double run_ms, const DryRunSettings& s) {
  double timed = s.reps;
  if (s.max_time > 0 && run_ms > 0) {
    timed = std::min(timed, std::max(1.0, std::ceil(s.max_time * 1e3 / run_ms)));
  }
  return (s.warmup + timed) * run_ms;
}

std::string seconds(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", ms / 1e3);
  return text;
}

}  // namespace

int report_dry_run(const std::vector<Case>& cases, std::size_t sweep_size, Context context,
                   const DryRunSettings& s) {
  std::vector<Fields> rows;
  struct Total {
    double ms = 0, low = 0, high = 0;
  } total;
  std::size_t estimated = 0, to_run = 0;
  // With --interleave the cases of one layer and pass hold their tensors and workspaces at
  // once, per device: the largest such sum is the sweep's peak.
  struct Group {
    int64_t bytes = 0;
    std::size_t cases = 0;
    const Case* first = nullptr;
  };
  std::map<std::string, Group> largest, current;  // by device
  auto close_groups = [&] {
    for (const auto& [device, group] : current) {
      if (group.bytes > largest[device].bytes) largest[device] = group;
    }
    current.clear();
  };
  const Case* previous = nullptr;
  for (const Case& c : cases) {
    if (previous && !same_layer_and_pass(*previous, c)) close_groups();
    previous = &c;
    // The identity columns of the row the run would write, made as the run makes them.
    const Row row = make_row(c);
    Fields f = {{"suite", row.suite}, {"layer", row.layer},         {"descriptor", row.descriptor},
                {"pass", row.pass},   {"algorithm", row.algorithm}, {"device", row.device}};
    f["index"] = std::to_string(c.index);
    f["knobs"] = convlab::format_knobs(c.knobs);
    // The memory model of `convbench memory`, planned with the case's own knobs.
    const convlab::PassMemory m =
        convlab::pass_memory(*c.algorithm, c.layer.problem, c.pass, c.knobs);
    f["source"] = convlab::to_string(m.source);
    f["reason"] = m.reason;
    f["x_bytes"] = std::to_string(m.tensors.x);
    f["w_bytes"] = std::to_string(m.tensors.w);
    f["y_bytes"] = std::to_string(m.tensors.y);
    bool runs = m.known();
    if (m.known()) {
      f["workspace_bytes"] = std::to_string(m.workspace);
      f["total_bytes"] = std::to_string(m.total());
      if (s.budget) {
        const bool over = m.total() > s.budget->bytes;
        f["over_budget"] = over ? "yes" : "no";
        runs = !over;  // refused after planning, before anything is allocated or run
      }
    }
    to_run += runs;
    if (runs) {
      Group& group = current[row.device];
      group.bytes += m.total();
      ++group.cases;
      if (!group.first) group.first = &c;
    }
    if (runs && s.calibration) {
      const convlab::Prediction p = convlab::predict(c.algorithm->info(), c.layer.problem, c.pass,
                                                     *s.measured_on, s.calibration);
      if (p.calibrated) {
        f["estimated_ms"] = format_real(p.time_ms);
        total.ms += sweep_ms(p.time_ms, s);
        if (p.range) {
          f["estimated_ms_low"] = format_real(p.range->low_ms);
          f["estimated_ms_high"] = format_real(p.range->high_ms);
          total.low += sweep_ms(p.range->low_ms, s);
          total.high += sweep_ms(p.range->high_ms, s);
        }
        ++estimated;
      }
    }
    rows.push_back(std::move(f));
  }

  close_groups();
  std::string peak = "none: not interleaved (one case's memory at a time)";
  if (s.interleave) {
    peak.clear();
    for (const auto& [device, group] : largest) {
      const Case& c = *group.first;
      peak += (peak.empty() ? "" : "; ") + device + " " + std::to_string(group.bytes) +
              " bytes (" + convlab::format_size(group.bytes) + ", " +
              (c.layer.name.empty() ? c.layer.problem.descriptor() : c.layer.name) + " " +
              convlab::to_string(c.pass) + ", " + std::to_string(group.cases) + " cases)";
    }
    if (peak.empty()) peak = "none: no case would run";
  }

  const std::string command = context["command"];
  context.erase("command");
  context["dry_run"] = "yes: nothing was run and no file was written";
  context["dry_run_cases"] = static_cast<int64_t>(cases.size());
  context["calibration"] = s.calibration_text;
  std::string estimate = "none (no --calibrate)";
  if (s.calibration) {
    estimate = std::to_string(estimated) + " of " + std::to_string(to_run) +
               " cases to run estimated on " + s.measured_on->id + ": " + seconds(total.ms) + " (" +
               seconds(total.low) + " to " + seconds(total.high) +
               ") of warm-up and timed runs; planning, inputs and --check not counted";
  }
  context["estimate"] = estimate;
  context["interleaved_peak"] = peak;
  context["command"] = command;

  auto emit = [&](std::ostream& out, const std::string& format) {
    if (format == "csv") {
      write_fields_csv(out, context, dry_run_columns(), rows);
    } else if (format == "json") {
      nlohmann::ordered_json doc = {{"context", context}, {"cases", nlohmann::json::array()}};
      for (const Fields& r : rows) {
        nlohmann::ordered_json object =
            fields_json(r, dry_run_columns(), AbsentField::null, EmptyText::empty_string);
        doc["cases"].push_back(object);
      }
      out << doc.dump(2) << "\n";
    } else {
      out << "Dry run: " << cases.size() << " cases would run";
      if (cases.size() != sweep_size) out << " of the sweep's " << sweep_size;
      out << "; nothing is run and no file is written\n";
      out << "Memory per case (x, w, y are the pass's three tensors: x/dx, w/dw, y/dy); time: "
          << (s.calibration ? "estimated ms a run on " + s.measured_on->id +
                                  ", (low-high) = the calibration's per-case range"
                            : "no estimate (give --calibrate SWEEP.csv)")
          << "\n";
      std::vector<std::string> titles = {"#", "layer", "pass",      "algorithm", "x",
                                         "w", "y",     "workspace", "total"};
      if (s.budget) titles.push_back("over budget");
      titles.insert(titles.end(), {"estimated ms", "note"});
      std::vector<std::vector<std::string>> table;
      for (const Fields& r : rows) {
        auto get = [&](const char* key) {
          auto it = r.find(key);
          return it == r.end() ? std::string() : it->second;
        };
        auto size = [&](const char* key) {
          return get(key).empty() ? std::string() : convlab::format_size(std::stoll(get(key)));
        };
        std::vector<std::string> cells = {
            get("index"),       get("layer").empty() ? get("descriptor") : get("layer"),
            get("pass"),        get("algorithm"),
            size("x_bytes"),    size("w_bytes"),
            size("y_bytes"),    size("workspace_bytes"),
            size("total_bytes")};
        if (s.budget) cells.push_back(get("over_budget"));
        std::string time = get("over_budget") == "yes"   ? "not run"
                           : get("estimated_ms").empty() ? "no estimate"
                                                         : get("estimated_ms");
        if (!get("estimated_ms_low").empty()) {
          time += " " + format_range(std::stod(get("estimated_ms_low")),
                                     std::stod(get("estimated_ms_high")));
        }
        cells.push_back(time);
        cells.push_back(get("source") == "plan" ? "" : get("source") + ": " + get("reason"));
        table.push_back(cells);
      }
      print_table(out, titles, table);
      out << "\nEstimate: " << context["estimate"].get<std::string>() << "\n";
      if (s.interleave) {
        out << "Interleaved, the largest layer and pass hold at once: "
            << context["interleaved_peak"].get<std::string>() << "\n";
      }
    }
  };
  write_report(std::string(to_string(s.format)), std::nullopt, "--out", emit);
  return 0;
}

void check_dry_run_flags(const RunOptions& o) {
  if (o.dry_run && o.devices) {
    throw UsageError("--dry-run with --devices " + *o.devices +
                     ": the workers would share the same cases that --dry-run without "
                     "--devices lists; drop --devices to list them");
  }
  if (!o.dry_run && (o.calibration.sweep || o.calibration.card || o.calibration.device)) {
    throw UsageError(
        "--calibrate estimates the times of a --dry-run (a sweep measures them): add "
        "--dry-run, or use convbench predict --calibrate");
  }
}

int run_dry(const RunOptions& o, const std::vector<Case>& cases, std::size_t sweep_size,
            const Context& context, const std::optional<Budget>& budget,
            const std::optional<convlab::Calibration>& calibration,
            const convlab::CardDatabase& cards, Format format) {
  DryRunSettings s;
  s.format = format;
  s.reps = o.reps;
  s.warmup = o.warmup;
  s.max_time = o.max_time;
  s.interleave = o.interleave;
  s.budget = budget;
  if (calibration) {
    s.calibration = &*calibration;
    s.measured_on = &cards.get(calibration->card_id);
  }
  s.calibration_text = describe_calibration(calibration, o.calibration);
  return report_dry_run(cases, sweep_size, context, s);
}

}  // namespace convbench
