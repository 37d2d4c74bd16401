// `convbench run`: validate everything and build the whole case list first, then open the
// outputs, then run the cases one by one, each row reported (and flushed) as it finishes.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "commands/commands.hpp"
#include "convlab/error.hpp"
#include "options/cli.hpp"
#include "options/knob_flags.hpp"
#include "output/checked_stream.hpp"
#include "output/dump.hpp"
#include "output/output_file.hpp"
#include "output/plot_command.hpp"
#include "output/progress.hpp"
#include "output/reporters.hpp"
#include "output/results_file.hpp"
#include "sweep/budgets.hpp"
#include "sweep/dry_run.hpp"
#include "sweep/inputs.hpp"
#include "sweep/runner.hpp"
#include "sweep/select.hpp"
#include "sweep/shards.hpp"
#include "sweep/signals.hpp"
#include "sweep/sweep_identity.hpp"
#include "sweep/vary.hpp"
#include "sweep/workers.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

Format parse_format(const std::string& text) {
  if (auto format = convlab::find_value(kFormatNames, text)) return *format;
  throw UsageError("unknown format '" + text + "'; expected " + convlab::names_list(kFormatNames));
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

// The files this run reads, which no output may be.
std::vector<InputPath> run_inputs(const RunOptions& o) {
  std::vector<InputPath> inputs;
  for (const std::string& f : o.batch_files) inputs.push_back({f, "--batch-file"});
  for (const std::string& f : o.cards) inputs.push_back({f, "--cards"});
  return inputs;
}

// The first `bytes` of `path` (the complete rows of a finished sweep that --resume continues).
void copy_prefix(const std::string& path, std::size_t bytes, std::ostream& out) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chunk(1 << 16);
  while (bytes > 0 && in) {
    in.read(chunk.data(), static_cast<std::streamsize>(std::min(bytes, chunk.size())));
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    out.write(chunk.data(), static_cast<std::streamsize>(got));
    bytes -= got;
  }
  if (bytes > 0) {
    throw convlab::Error(convlab::ErrorCode::io, "--resume: cannot read '" + path + "' again");
  }
  check_stream(out);
}

// `rows_to_stdout`: --out - was given (and is cleared from `o`): the rows go to stdout in
// that format and the table to stderr, so that a pipe gets nothing but rows.
int run_sweep_to(const RunOptions& o, const std::string& command_line,
                 std::optional<Format> rows_to_stdout) {
  // --devices: this process only starts one worker per device and merges their rows.
  if (o.devices && !o.worker) {
    if (o.out) check_output_path(*o.out, "--out", run_inputs(o));
    return run_with_workers(o);
  }

  // 1. Everything the user gave is checked and the case list built: any failure here is bad
  //    input (exit 2) and nothing has been written.
  const Format stdout_format = o.format ? parse_format(*o.format) : Format::table;
  std::optional<Format> out_format;
  if (o.out) {
    // First: "is a directory" says more than "no suffix".
    check_output_path(*o.out, "--out", run_inputs(o));
    out_format = file_format(*o.out, o.format);
  }
  if (o.resume && (!o.out || *out_format != Format::csv)) {
    throw UsageError("--resume appends to the rows of a CSV --out FILE.csv; give one");
  }
  SweepSpec spec;
  convlab::CheckScope check_scope;
  FillSpec fill;
  std::vector<Case> cases;
  std::vector<const convlab::Algorithm*> algorithms;
  std::vector<std::string> skipped;
  try {
    spec.layers = o;
    if (!o.vary.empty()) {
      if (o.shapes.empty()) throw UsageError("--vary needs a base --shape to vary");
      if (o.mb) {
        for (const std::string& v : o.vary) {
          if (v.rfind("mb=", 0) == 0) {
            throw UsageError("--vary '" + v + "' and --mb " + std::to_string(*o.mb) +
                             " together: --mb would override every varied mb; give one");
          }
        }
      }
      std::vector<VaryAxis> axes;
      for (const std::string& v : o.vary) axes.push_back(parse_vary(v));
      check_vary_size(o.shapes.size(), axes, o.max_cases);
      spec.layers.shapes = expand_vary(o.shapes, axes, skipped);
      if (spec.layers.shapes.empty()) {
        throw UsageError("--vary: no combination is a valid convolution (" + skipped.front() + ")");
      }
    }
    spec.passes = parse_passes(o.passes);
    spec.check = o.check;
    if (o.check) check_scope = convlab::parse_check_scope(o.check_scope);
    spec.max_cases = o.max_cases;
    cases = build_cases(spec);
    algorithms = select_algorithms(spec);
    std::vector<KnobFlag> knob_flags;
    for (const std::string& k : o.knobs) knob_flags.push_back(parse_knob_flag(k));
    apply_knob_flags(knob_flags, algorithms, cases);
    if (o.device) apply_device_setting(*o.device, cases);
    fill = parse_fill(o.fill);
    check_fill_fits(fill, cases);
    for (const Case& c : cases) make_row(c);  // resolves every knob: environment defaults read
    if (o.dump) check_dump_directory(*o.dump);
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
  convlab::CardDatabase cards = convlab::CardDatabase::builtin();
  const std::optional<Budget> budget = resolve_budget(o, cards);
  const std::optional<convlab::Calibration> calibration = load_calibration(o.calibration, cards);
  const std::optional<Shard> shard = resolve_shard(o.shard);
  const std::optional<Shard> worker =
      o.worker ? std::optional<Shard>(parse_shard(*o.worker, "--worker")) : std::nullopt;
  const std::vector<Case> sweep = cases;  // the whole sweep, before --shard and --resume
  if (shard) cases = take_part(cases, *shard);
  if (worker) cases = take_part(cases, *worker);
  const std::vector<Case> part = cases;  // this process's share, before --resume
  // --out FILE is written as FILE.partial (locked: one writer per FILE) and renamed over FILE
  // when the sweep finishes, so that a sweep that dies leaves an existing FILE as it was.
  // --resume continues the .partial of an interrupted sweep, else the rows of a finished
  // FILE (copied to .partial). The lock comes first so that no other process is writing the
  // journal while it is read.
  // A dry run opens nothing: it reads the journal unlocked, as it is now.
  std::unique_ptr<OutputFile> output;
  if (o.out && !o.dry_run) {
    output = std::make_unique<OutputFile>(*o.out, "--out", OutputFile::OnAbandon::keep);
  }
  std::optional<SweepFile> previous;
  std::string resumed;  // the file --resume read its rows from
  if (o.resume) {
    std::error_code ec;
    const std::string journal = partial_path(*o.out);
    if (output ? output->previous_bytes() > 0
               : fs::is_regular_file(journal, ec) && fs::file_size(journal, ec) > 0) {
      resumed = journal;
    } else if (fs::is_regular_file(*o.out, ec) && fs::file_size(*o.out, ec) > 0) {
      resumed = *o.out;
    }
  }
  if (!resumed.empty()) {
    try {
      previous = read_sweep_file(resumed);
    } catch (const convlab::Error& e) {
      throw UsageError(std::string("--resume: ") + e.what());
    }
  }

  Context context = collect_context(algorithms);
  add_run_context(context, o, check_scope.describe(), algorithms);
  context["command"] = command_line;
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
  // Part of the sweep's identity for --resume even where two patterns pick the same layers.
  if (o.match) context["match"] = *o.match;

  if (previous) {
    // The journal must be this very sweep: same settings, same cases (sweep_digest), and no
    // row that this sweep would not have written.
    std::string difference = settings_difference(*previous, context_as_file(context));
    const std::string foreign = row_outside_sweep(*previous, sweep);
    if (!foreign.empty()) {
      difference += (difference.empty() ? "" : "; ") + std::string("its row '") + foreign +
                    "' is no case of this sweep";
    }
    if (!difference.empty()) {
      throw UsageError("--resume: '" + resumed + "' was written by another sweep (" + difference +
                       "); give another --out, or drop --resume to overwrite it");
    }
    std::set<std::string> done;
    for (size_t i = 0; i < previous->rows.size(); ++i) done.insert(previous->key(i));
    std::vector<Case> left;
    for (const Case& c : cases) {
      if (!done.count(c.identity)) left.push_back(c);
    }
    std::cerr << "convbench: --resume: " << cases.size() - left.size() << " of " << cases.size()
              << " cases already in " << resumed << "\n";
    cases = std::move(left);
  }
  for (const std::string& why : skipped) std::cerr << "convbench: --vary: skipped " << why << "\n";
  // The size is shown before anything runs, so a sweep far larger than meant is seen at once.
  std::cerr << "convbench: " << cases.size() << " cases to run";
  if (cases.size() != sweep.size()) std::cerr << " of the sweep's " << sweep.size();
  std::cerr << " (at most --max-cases " << o.max_cases << ")\n";
  if (o.dry_run) {
    return run_dry(o, cases, sweep.size(), context, budget, calibration, cards,
                   rows_to_stdout.value_or(stdout_format));
  }

  // 2. The outputs open: from here on, failures are runtime failures (exit 1).
  std::ostream* file = nullptr;
  ReporterGroup reporters;
  if (rows_to_stdout) {
    reporters.push_back(make_reporter(*rows_to_stdout, std::cout, o.check));
    reporters.push_back(make_reporter(Format::table, std::cerr, o.check));
  } else {
    reporters.push_back(make_reporter(stdout_format, std::cout, o.check));
  }
  const std::string partial = o.out ? output->partial() : std::string();
  if (o.out) {
    if (previous && resumed == partial) {
      file = &output->begin(static_cast<int64_t>(previous->complete_bytes));
    } else {
      file = &output->begin(0);
      if (previous) copy_prefix(resumed, previous->complete_bytes, *file);
    }
    if (previous && previous->torn_bytes > 0) {
      std::cerr << "convbench: --resume: dropped a torn last row (" << previous->torn_bytes
                << " bytes) of " << resumed << "\n";
    }
    reporters.push_back(previous ? make_csv_rows_reporter(*file)
                                 : make_reporter(*out_format, *file, o.check));
  }
  if (!worker && ::isatty(STDERR_FILENO)) reporters.push_back(make_progress_reporter(cases.size()));
  std::unique_ptr<Dumper> dumper;
  if (o.dump) dumper = std::make_unique<Dumper>(*o.dump);

  RunSettings run;
  run.reps = o.reps;
  run.warmup = o.warmup;
  run.max_time = o.max_time;
  run.check = o.check;
  run.check_scope = check_scope;
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

  // 3. The sweep. SIGINT/SIGTERM let the running case (or --interleave's group) finish and
  // its rows be written.
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
  for (size_t first = 0; first < cases.size();) {
    if (interrupted()) break;
    // One case at a time, or with --interleave the cases of one layer and pass together.
    size_t end = first + 1;
    while (o.interleave && end < cases.size() && same_layer_and_pass(cases[end], cases[first])) {
      ++end;
    }
    const std::vector<Case> group(cases.begin() + first, cases.begin() + end);
    reporters.case_started(group.front());
    for (const Row& row : run_cases(group, run)) {
      summary.add(row);
      reporters.add(row);
      ++ran;
      if (tracker) {
        if (std::optional<Row> chosen = tracker->add(row)) reporters.add(*chosen);
      }
    }
    // A lost row stops the sweep at once (exit 1), not after hours of unrecorded work.
    check_stream(std::cout);
    if (file) check_stream(*file);
    first = end;
  }
  reporters.end(summary);
  // Finished (error rows included: they are results): the rows replace FILE. Interrupted:
  // FILE stays as it was and the rows wait in FILE.partial for --resume.
  const bool finished = !interrupted();
  if (o.out) {
    if (finished) {
      output->commit();
    } else {
      output->keep();
    }
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
              << " cases" << (o.out ? "; continue with the same command and --resume" : "") << "\n";
    return 128 + interrupt_signal();
  }
  if (o.out && out_format == Format::csv && !worker) {
    std::cerr << "convbench: plot it: " << plot_command(*o.out) << "\n";
  }
  return summary.error > 0 ? 1 : 0;
}

}  // namespace

int run_sweep(const RunOptions& o, const std::string& command_line) {
  check_dry_run_flags(o);
  if (!o.out || *o.out != "-") return run_sweep_to(o, command_line, std::nullopt);
  // Nothing but the rows may reach stdout, and a pipe is no file to continue or to merge into.
  if (o.resume) {
    throw UsageError(
        "--resume continues a CSV file; --out - writes to stdout: give --out FILE.csv");
  }
  if (o.devices) {
    throw UsageError(
        "--devices merges its workers' rows into a file; --out - writes to stdout: "
        "give --out FILE.csv or FILE.json");
  }
  if (o.format && *o.format == "table") {
    throw UsageError(
        "--out - writes CSV or JSON rows to stdout (the table goes to stderr): give "
        "--format csv or --format json, or no --format for CSV");
  }
  RunOptions to_stdout = o;
  to_stdout.out.reset();
  to_stdout.format.reset();
  return run_sweep_to(to_stdout, command_line, o.format ? parse_format(*o.format) : Format::csv);
}

}  // namespace convbench
