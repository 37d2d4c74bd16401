// `convbench run`: validate everything and build the whole case list first, then open the
// outputs, then run the cases one by one, each row reported (and flushed) as it finishes.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "cli.hpp"
#include "convlab/error.hpp"
#include "dump.hpp"
#include "options/knob_flags.hpp"
#include "sweep/inputs.hpp"
#include "reporters.hpp"
#include "runner.hpp"
#include "sweep_control.hpp"
#include "workers.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

Format parse_format(const std::string& text) {
  if (text == "table") return Format::table;
  if (text == "csv") return Format::csv;
  if (text == "json") return Format::json;
  throw UsageError("unknown format '" + text + "'; expected table, csv or json");
}

// --out's format: its suffix, else --format when that is csv or json.
Format file_format(const std::string& path, const std::optional<std::string>& format) {
  std::string suffix = fs::path(path).extension().string();
  for (char& ch : suffix) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (suffix == ".csv") return Format::csv;
  if (suffix == ".json") return Format::json;
  if (format && *format != "table") return parse_format(*format);
  throw UsageError("cannot tell the format of --out '" + path +
                   "': name it .csv or .json, or give --format csv or --format json");
}

std::string join_names(const std::vector<const convlab::Algorithm*>& algorithms) {
  std::string names;
  for (const auto* a : algorithms) names += (names.empty() ? "" : ",") + a->name();
  return names;
}

}  // namespace

void check_writable(const std::string& path, const std::string& flag) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::exists(p, ec)) {
    if (fs::is_directory(p, ec)) throw UsageError(flag + " '" + path + "' is a directory");
    if (::access(p.c_str(), W_OK) != 0) {
      throw UsageError(flag + " '" + path + "' is not writable: " + std::strerror(errno));
    }
    return;
  }
  fs::path parent = p.parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec)) {
    throw UsageError(flag + " '" + path + "': directory '" + parent.string() + "' does not exist");
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    throw UsageError(flag + " '" + path + "': directory '" + parent.string() +
                     "' is not writable: " + std::strerror(errno));
  }
}

std::string partial_path(const std::string& path) { return path + ".partial"; }

void finish_partial(const std::string& path) {
  std::error_code ec;
  fs::rename(partial_path(path), path, ec);
  if (ec) {
    throw convlab::Error(convlab::ErrorCode::io, "cannot rename '" + partial_path(path) +
                                                     "' to '" + path + "': " + ec.message());
  }
}

int run_sweep(const RunOptions& o, const std::string& command_line) {
  // --devices: this process only starts one worker per device and merges their rows.
  if (o.devices && !o.worker) return run_with_workers(o);

  // 1. Everything the user gave is checked and the case list built: any failure here is bad
  //    input (exit 2) and nothing has been written.
  const Format stdout_format = o.format ? parse_format(*o.format) : Format::table;
  std::optional<Format> out_format;
  if (o.out) {
    check_writable(*o.out);  // first: "is a directory" says more than "no suffix"
    out_format = file_format(*o.out, o.format);
  }
  if (o.resume && (!o.out || *out_format != Format::csv)) {
    throw UsageError("--resume appends to the rows of a CSV --out FILE.csv; give one");
  }
  SweepSpec spec;
  FillSpec fill;
  std::vector<Case> cases;
  std::vector<const convlab::Algorithm*> algorithms;
  std::vector<std::string> skipped;
  try {
    spec.shapes = o.shapes;
    if (!o.vary.empty()) {
      if (o.shapes.empty()) throw UsageError("--vary needs a base --shape to vary");
      std::vector<VaryAxis> axes;
      for (const std::string& v : o.vary) axes.push_back(parse_vary(v));
      spec.shapes = expand_vary(o.shapes, axes, skipped);
      if (spec.shapes.empty()) {
        throw UsageError("--vary: no combination is a valid convolution (" + skipped.front() +
                         ")");
      }
    }
    spec.batch_files = o.batch_files;
    spec.suites = o.suites;
    spec.mb = o.mb;
    spec.algos = o.algos;
    spec.passes = parse_passes(o.passes);
    spec.check = o.check;
    cases = build_cases(spec);
    algorithms = select_algorithms(spec);
    std::vector<KnobFlag> knob_flags;
    for (const std::string& k : o.knobs) knob_flags.push_back(parse_knob_flag(k));
    apply_knob_flags(knob_flags, algorithms, cases);
    fill = parse_fill(o.fill);
    for (const Case& c : cases) make_row(c);  // resolves every knob: environment defaults read
    if (o.dump) check_dump_directory(*o.dump);
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
  convlab::CardDatabase cards = convlab::CardDatabase::builtin();
  const std::optional<Budget> budget = resolve_budget(o, cards);
  const std::optional<Shard> shard = resolve_shard(o.shard);
  const std::optional<Shard> worker =
      o.worker ? std::optional<Shard>(parse_shard(*o.worker, "--worker")) : std::nullopt;
  const std::vector<Case> sweep = cases;  // the whole sweep, before --shard and --resume
  if (shard) cases = take_part(cases, *shard);
  if (worker) cases = take_part(cases, *worker);
  const std::vector<Case> part = cases;  // this process's share, before --resume
  // --out FILE is written as FILE.partial and renamed over FILE when the sweep finishes, so
  // that a sweep that dies leaves an existing FILE as it was. --resume continues the
  // .partial of an interrupted sweep, else the rows of a finished FILE (copied to .partial).
  std::optional<SweepFile> previous;
  std::string resumed;  // the file --resume read its rows from
  if (o.resume) {
    std::error_code ec;
    for (const std::string& p : {partial_path(*o.out), *o.out}) {
      if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) > 0) {
        resumed = p;
        break;
      }
    }
  }
  if (!resumed.empty()) {
    try {
      previous = read_sweep_file(resumed);
    } catch (const convlab::Error& e) {
      throw UsageError(std::string("--resume: ") + e.what());
    }
  }

  ContextSettings settings;
  settings.command_line = command_line;
  settings.seed = o.seed;
  settings.reps = o.reps;
  settings.warmup = o.warmup;
  settings.max_time = o.max_time;
  settings.check = o.check;
  settings.passes = o.passes;
  settings.algorithms = join_names(algorithms);
  settings.mb = o.mb ? std::to_string(*o.mb)
                     : (o.suites.empty() && o.batch_files.empty() && o.shapes.empty()
                            ? std::to_string(kDefaultSweepMb) + " (default sweep)"
                            : "as listed");
  Context context = collect_context(settings, algorithms);
  add_sweep_context(context, o, budget, shard, worker, sweep, part);
  // Every setting that can change a number: the knobs given, and the environment variables
  // that supplied a knob's default (resolved above, for every case, so the list is complete).
  std::string knob_text;
  for (const std::string& k : o.knobs) knob_text += (knob_text.empty() ? "" : "; ") + k;
  context["knobs"] = knob_text.empty() ? "none" : knob_text;
  std::string environment;
  for (const auto& [name, value] : convlab::environment_defaults_used())
    environment += (environment.empty() ? "" : "; ") + name + "=" + value;
  context["environment_defaults"] = environment.empty() ? "none" : environment;
  context["fill"] = fill.text;

  if (previous) {
    const std::string difference = settings_difference(*previous, context_as_file(context));
    if (!difference.empty()) {
      throw UsageError("--resume: '" + resumed + "' was written with other settings (" +
                       difference + "); give another --out, or drop --resume to overwrite it");
    }
    std::set<std::string> done;
    for (size_t i = 0; i < previous->rows.size(); ++i) done.insert(previous->key(i));
    std::vector<Case> left;
    for (const Case& c : cases) {
      const Row r = make_row(c);
      if (!done.count(r.suite + "|" + r.layer + "|" +
                      case_key(r.descriptor, r.pass, r.algorithm, r.device))) {
        left.push_back(c);
      }
    }
    std::cerr << "convbench: --resume: " << cases.size() - left.size() << " of "
              << cases.size() << " cases already in " << resumed << "\n";
    cases = std::move(left);
  }
  for (const std::string& why : skipped) std::cerr << "convbench: --vary: skipped " << why << "\n";

  // 2. The outputs open: from here on, failures are runtime failures (exit 1).
  std::ofstream file;
  ReporterGroup reporters;
  reporters.push_back(make_reporter(stdout_format, std::cout, o.check));
  const std::string partial = o.out ? partial_path(*o.out) : std::string();
  if (o.out) {
    if (previous && resumed != partial) {
      std::error_code ec;
      fs::copy_file(resumed, partial, fs::copy_options::overwrite_existing, ec);
      if (ec) {
        throw convlab::Error(convlab::ErrorCode::io, "--resume: cannot copy '" + resumed +
                                                         "' to '" + partial + "': " + ec.message());
      }
    }
    if (previous && previous->torn_bytes > 0) {
      fs::resize_file(partial, previous->complete_bytes);
      std::cerr << "convbench: --resume: dropped a torn last row (" << previous->torn_bytes
                << " bytes) of " << resumed << "\n";
    }
    file.open(partial, previous ? std::ios::out | std::ios::app : std::ios::out | std::ios::trunc);
    if (!file) {
      throw convlab::Error(convlab::ErrorCode::io,
                           "cannot open '" + partial + "': " + std::strerror(errno));
    }
    reporters.push_back(previous ? make_csv_rows_reporter(file)
                                 : make_reporter(*out_format, file, o.check));
  }
  if (!worker && ::isatty(STDERR_FILENO)) reporters.push_back(make_progress_reporter(cases.size()));
  std::unique_ptr<Dumper> dumper;
  if (o.dump) dumper = std::make_unique<Dumper>(*o.dump);

  RunSettings run;
  run.reps = o.reps;
  run.warmup = o.warmup;
  run.max_time = o.max_time;
  run.check = o.check;
  run.seed = o.seed;
  run.dumper = dumper.get();
  InputCache inputs(o.seed, fill);
  run.inputs = &inputs;
  if (budget) {
    run.budget = budget->bytes;
    run.budget_label = budget->label;
  }
  std::optional<SelectTracker> tracker;
  if (o.select) tracker.emplace(part, budget);

  // 3. The sweep. SIGINT/SIGTERM let the running case finish and its row be written.
  install_interrupt_handlers();
  const auto start = std::chrono::steady_clock::now();
  Summary summary;
  reporters.begin(context, cases);
  if (tracker && previous) {
    // Rows from before the interruption count for --select; a group that was complete but
    // lost its select row gets it now.
    for (size_t i = 0; i < previous->rows.size(); ++i) {
      const Row r = row_from_file(*previous, i);
      if (r.algorithm == "select") {
        tracker->already_written(r);
      } else if (std::optional<Row> chosen = tracker->add(r)) {
        reporters.add(*chosen);
      }
    }
  }
  size_t ran = 0;
  for (const Case& c : cases) {
    if (interrupted()) break;
    reporters.case_started(c);
    const Row row = run_case(c, run);
    summary.add(row);
    reporters.add(row);
    ++ran;
    if (tracker) {
      if (std::optional<Row> chosen = tracker->add(row)) reporters.add(*chosen);
    }
  }
  reporters.end(summary);
  // Finished (error rows included: they are results): the rows replace FILE. Interrupted:
  // FILE stays as it was and the rows wait in FILE.partial for --resume.
  const bool finished = !interrupted();
  if (o.out) {
    file.close();
    if (!file) throw convlab::Error(convlab::ErrorCode::io, "writing '" + partial + "' failed");
    if (finished) finish_partial(*o.out);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1f", seconds);
  std::cerr << "convbench: " << summary.line() << " in " << elapsed << " s";
  if (o.out) std::cerr << "; rows in " << (finished ? *o.out : partial);
  if (o.dump) std::cerr << "; dump in " << *o.dump;
  std::cerr << "\n";
  if (interrupted()) {
    const char* name = interrupt_signal() == SIGTERM ? "SIGTERM" : "SIGINT";
    std::cerr << "convbench: interrupted (" << name << ") after " << ran << " of " << cases.size()
              << " cases"
              << (o.out ? "; continue with the same command and --resume" : "") << "\n";
    return 128 + interrupt_signal();
  }
  if (o.out && out_format == Format::csv && !worker) {
    std::cerr << "convbench: plot it: " << plot_command(*o.out) << "\n";
  }
  return summary.error > 0 ? 1 : 0;
}

}  // namespace convbench
