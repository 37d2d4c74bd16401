#include "options/cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace convbench {

int64_t parse_count(const std::string& text, const std::string& what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 12) {
    throw UsageError(what + ": '" + text + "' is not a non-negative integer");
  }
  return std::stoll(text);
}

namespace {

// A number flag checked against [low, high] (its help text says the range), default shown.
template <class T, class Bound>
CLI::Option* add_bounded(CLI::App* app, const std::string& flag, T& value, const std::string& help,
                         const std::string& type, Bound low, Bound high) {
  return app->add_option(flag, value, help)
      ->type_name(type)
      ->check(CLI::Range(low, high).description(""))
      ->capture_default_str();
}

// The layer selection of run, memory and predict; `shape_help` and `algos_help` say what
// differs (run's examples, each command's default algorithms).
void add_layer_options(CLI::App* app, LayerOptions& o, const std::string& shape_help,
                       const std::string& algos_help) {
  repeatable(app->add_option("--shape", o.shapes, shape_help), "DESCRIPTOR")
      ->take_all()
      ->type_size(1)
      ->allow_extra_args(false);
  repeatable(app->add_option("--batch-file", o.batch_files, "A benchdnn shape file"), "FILE")
      ->allow_extra_args(false);
  repeatable(app->add_option("--suite", o.suites,
                             "A built-in suite, or 'all'; also comma-separated; see 'list'"),
             "NAME")
      ->delimiter(',')
      ->allow_extra_args(false);
  app->add_option("--mb", o.mb, "Minibatch for every layer, 1 to 2^40 (overrides the shape's mb)")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40).description(""));
  app->add_option("--algos", o.algos, algos_help)->type_name("GLOBS");
  app->add_option(
         "--match", o.match,
         "Only the layers whose name contains a match of REGEX (ECMAScript), e.g. 'conv[45]_'")
      ->type_name("REGEX");
  app->add_option("--passes", o.passes, "Comma-separated passes: fwd, bwd_data, bwd_filter")
      ->type_name("LIST")
      ->capture_default_str();
}

// --format of the commands that write a table, CSV or JSON on stdout, and --out, their copy
// in a file.
void add_output_options(CLI::App* app, std::optional<std::string>& format,
                        std::optional<std::string>& out, const std::string& out_help) {
  app->add_option("--format", format, "Format on stdout (default table)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  app->add_option("--out", out, out_help)->type_name("FILE");
}

// What memory and predict share: the layer selection, --cards, --format and --out.
void add_report_options(CLI::App* app, LayerOptions& layers, const std::string& algos_default,
                        std::vector<std::string>& cards, const std::string& cards_help,
                        std::optional<std::string>& format, std::optional<std::string>& out) {
  add_layer_options(app, layers, "A benchdnn descriptor, once per --shape",
                    "Comma-separated algorithm names or globs (default: " + algos_default + ")");
  repeatable(app->add_option("--cards", cards, cards_help), "LIST")->allow_extra_args(false);
  add_output_options(app, format, out, "Also write FILE.csv or FILE.json");
}

// A subcommand with its one-line description and its help footer: "Examples:", one line per
// example (the arguments after `convbench NAME`), then `notes`.
CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description,
                      const std::vector<std::string>& examples, const std::string& notes = "") {
  std::string footer = "Examples:\n";
  for (const std::string& arguments : examples) {
    footer += "  convbench " + name + (arguments.empty() ? "" : " " + arguments) + "\n";
  }
  CLI::App* command = app.add_subcommand(name, description);
  command->footer(footer + notes);
  return command;
}

}  // namespace

CLI::App* add_list_command(CLI::App& app, ListOptions& options) {
  CLI::App* list =
      add_command(app, "list",
                  "List the algorithms (device, availability, determinism) and the built-in suites",
                  {"", "--format json"});
  list->add_option("--format", options.format, "Output format")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return list;
}

CLI::App* add_run_command(CLI::App& app, RunOptions& o) {
  CLI::App* run = add_command(
      app, "run", "Sweep layers x passes x algorithms and report time, memory and accuracy",
      {"--shape mb32ic64ih56oc64kh3ph1 --shape mb32ic128ih28oc128kh3ph1 --passes fwd --check",
       "--suite resnet50 --mb 32 --algos 'cpu.*' --out resnet50.csv",
       "--suite vgg16 --card gtx970 --select --out vgg16.csv --resume",
       "--shape mb8ic64ih56oc64kh3ph1 --vary kh=1:7:2 --passes fwd --dry-run"});
  add_layer_options(run, o, "A benchdnn descriptor, e.g. mb32ic64ih56oc64kh3ph1, once per --shape",
                    "Comma-separated algorithm names or globs, e.g. 'cpu.*,reference' "
                    "(default: every available algorithm; reference only with --check)");
  add_bounded(run, "--reps", o.reps, "Timed repetitions per case, 1 to 10^6 (median, min, max)",
              "N", 1, 1000000);
  add_bounded(run, "--warmup", o.warmup, "Untimed runs before the timed ones, 0 to 10^6", "N", 0,
              1000000);
  run->add_option("--max-time", o.max_time,
                  "Stop repeating a case once its timed runs add up to this many seconds "
                  "(after at least one), 0 to 1e9; 0 = always --reps")
      ->type_name("SECONDS")
      // CLI::Range lets NaN through (every comparison with it is false).
      ->check(CLI::Validator(
          [](std::string& value) {
            char* end = nullptr;
            const double d = std::strtod(value.c_str(), &end);
            const bool number = !value.empty() && end == value.c_str() + value.size();
            return number && std::isfinite(d) && d >= 0 && d <= 1e9
                       ? std::string()
                       : "--max-time must be a number of seconds in [0, 1e9], got '" + value + "'";
          },
          ""))
      ->capture_default_str();
  run->add_flag("--interleave", o.interleave,
                "Time the algorithms of a layer and pass in turns, one repetition of each per "
                "round, instead of each case's repetitions back to back: on a machine whose "
                "speed drifts, their medians then compare the same spells. Their buffers are "
                "held together, and each repetition follows another algorithm's (caches as "
                "that one left them)");
  run->add_flag("--check{auto}", o.check_scope,
                "Compare each output with the reference; outside the error bound = error. "
                "--check=full recomputes every output, --check=sampled[:N] N outputs per "
                "tensor (default 1000) chosen at random from the seed, each exactly in double; "
                "--check (auto) is full up to 2^28 multiply-adds per pass, sampled beyond")
      ->type_name("SCOPE")
      ->each([&o](const std::string&) { o.check = true; });
  add_output_options(run, o.format, o.out,
                     "Also write the rows to FILE: CSV or JSON by its suffix (.csv, .json) or "
                     "by --format");
  // CLI11 would wrap "-5" into a huge uint64_t seed, and a seed past 2^64 - 1 is not what
  // was typed either: both are refused, naming the value.
  run->add_option("--seed", o.seed, "Seed of the random inputs, 0 to 2^64 - 1")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& value) {
            const bool digits =
                !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
            errno = 0;
            if (digits) (void)std::strtoull(value.c_str(), nullptr, 10);
            return digits && errno != ERANGE
                       ? std::string()
                       : "the seed must be a whole number from 0 to 18446744073709551615, got '" +
                             value + "'";
          },
          ""))
      ->capture_default_str();
  run->add_option("--dump", o.dump,
                  "Write each case's inputs and output as .npy files and a manifest.json to DIR")
      ->type_name("DIR");
  repeatable(run->add_option("--knob", o.knobs,
                             "A knob of the algorithms matching ALGO (a name or glob), "
                             "validated against their schemas (see docs/convbench.md)"),
             "ALGO.KNOB=VALUE")
      ->allow_extra_args(false);
  run->add_option("--fill", o.fill,
                  "Inputs: random (uniform in [-1,1)), integers (exact sums), nan@I or inf@I "
                  "(random, element I of the first input NaN or +Inf)")
      ->type_name("KIND")
      ->capture_default_str();
  run->add_flag("--dry-run", o.dry_run,
                "List the cases the sweep would run (after --match, --shard, --resume) with "
                "their memory and, with --calibrate, their estimated time; run nothing and "
                "write no file");
  add_calibration_options(run, o.calibration, " (with --dry-run: estimated times)");
  // The sweep controls.
  run->add_option("--memory-budget", o.memory_budget,
                  "Mark cases whose tensors + workspace exceed SIZE (e.g. 3.5GiB, 8GB) "
                  "over_budget instead of running them")
      ->type_name("BYTES");
  run->add_option("--card", o.card,
                  "Budget = the usable memory of this card (see 'list'; e.g. gtx970)")
      ->type_name("NAME");
  repeatable(run->add_option("--cards", o.cards, "Add the cards of FILE.json to the card table"),
             "FILE")
      ->allow_extra_args(false);
  run->add_flag("--select", o.select,
                "After each layer and pass, add a row 'select' naming the fastest measured "
                "algorithm that fits the budget");
  run->add_flag("--resume", o.resume,
                "Skip the cases already in --out FILE.csv and append the others");
  run->add_option("--shard", o.shard,
                  "Run part I of N of the cases (default: from SLURM_ARRAY_TASK_ID and "
                  "SLURM_ARRAY_TASK_COUNT)")
      ->type_name("I/N");
  repeatable(run->add_option("--vary", o.vary,
                             "STEP is +N or *N: the Cartesian product of every --vary over "
                             "each --shape, e.g. kh=3:15:2 or ih=16:256:*2"),
             "FIELD=START:STOP[:STEP]")
      ->allow_extra_args(false);
  add_bounded(run, "--max-cases", o.max_cases,
              "Refuse a sweep of more cases than this (layers x passes x algorithms, "
              "--vary combinations included) before anything runs; 1 to 2^40",
              "N", int64_t{1}, int64_t{1} << 40);
  run->add_option("--devices", o.devices,
                  "Run the cases on these GPUs at once, one worker process per device, e.g. 0,1")
      ->type_name("LIST");
  run->add_option("--device", o.device,
                  "Run the GPU algorithms on device N: sets the `device` knob of every algorithm "
                  "that has one (recorded in the rows' knobs)")
      ->type_name("N");
  run->add_option("--worker", o.worker, "(internal) the part of the cases of a --devices worker")
      ->group("");
  return run;
}

CLI::App* add_memory_command(CLI::App& app, MemoryOptions& o) {
  CLI::App* memory = add_command(
      app, "memory", "Memory per layer x algorithm x pass and per network; fits per card",
      {"--suite resnet50 --mb 64 --cards gtx970,titan-x",
       "--suite vgg16 --inference --cards all --format csv --out vgg16-memory.csv",
       "--shape mb32ic3ih224oc64kh7sh2ph3 --algos 'cpu.*' --passes fwd --memory-budget 3.5GiB"});
  add_report_options(memory, o.layers, "every available algorithm but the reference", o.cards,
                     "Cards to check: ids, comma lists, 'all', or FILE.json", o.format, o.out);
  memory->add_option("--memory-budget", o.memory_budget, "Flag everything over SIZE, e.g. 3.5GiB")
      ->type_name("BYTES");
  memory->add_flag("--inference", o.inference,
                   "Network memory for inference (forward only) instead of training");
  add_bounded(memory, "--optimizer-states", o.optimizer_states,
              "Optimizer buffers per weight, 0 to 16: 0 SGD, 1 momentum, 2 Adam", "N", 0, 16);
  memory
      ->add_option("--fallback", o.fallback,
                   "In the network totals, use this algorithm for the cases a strategy does "
                   "not support (default: none; the network is then incomplete)")
      ->type_name("NAME");
  add_bounded(memory, "--max-batch", o.max_batch,
              "Largest batch the per-card search tries, 1 to 2^30", "N", int64_t{1},
              int64_t{1} << 30);
  return memory;
}

CLI::App* add_predict_command(CLI::App& app, PredictOptions& o) {
  CLI::App* predict = add_command(
      app, "predict", "Roofline time per layer x algorithm x card, and a ranking of the cards",
      {"--suite resnet50 --mb 32 --cards gtx970,titan-x,v100",
       "--shape mb64ic256ih14oc256kh3ph1 --algos 'cuda.*' --format json",
       "--suite alexnet --cards all --format csv --out alexnet-predict.csv"});
  add_report_options(predict, o.layers, "every registered algorithm but the reference", o.cards,
                     "Cards: ids, comma lists, 'all' (default), or FILE.json", o.format, o.out);
  add_calibration_options(predict, o.calibration, "");
  return predict;
}

CLI::App* add_merge_command(CLI::App& app, MergeOptions& o) {
  CLI::App* merge = add_command(
      app, "merge", "Concatenate the CSVs of a sharded sweep; report missing and duplicate cases",
      {"resnet50.csv part-1.csv part-2.csv", "resnet50.csv part-*.csv --allow-incomplete"});
  merge->add_option("OUT", o.out, "The merged CSV to write")->type_name("FILE")->required();
  merge->add_option("IN", o.inputs, "The shards' CSVs")
      ->type_name("FILE")
      ->required()
      ->expected(1, -1);
  merge->add_flag("--allow-incomplete", o.allow_incomplete,
                  "Exit 0 even when cases are missing (still reported)");
  return merge;
}

CLI::App* add_compare_command(CLI::App& app, CompareOptions& o) {
  CLI::App* compare = add_command(
      app, "compare",
      "Compare two sweep CSVs case by case: B/A per case, geometric mean, and a verdict only "
      "where the difference exceeds both runs' noise",
      {"before.csv after.csv", "laptop.csv server.csv --format csv --out ab.csv"},
      "A case is slower/faster only when every repetition of B lies beyond every repetition\n"
      "of A and that separation has a chance below --alpha without a real difference\n"
      "(exact Mann-Whitney, 2/C(m+n,m)); otherwise within_noise or too_few_reps.\n");
  compare->add_option("A", o.a, "The baseline sweep CSV (convbench run --out A.csv)")
      ->type_name("A.csv")
      ->required();
  compare->add_option("B", o.b, "The sweep CSV compared with it")->type_name("B.csv")->required();
  add_bounded(compare, "--alpha", o.alpha,
              "Largest chance of a verdict without a real difference, 1e-12 to 1", "P", 1e-12, 1.0);
  add_output_options(compare, o.format, o.out,
                     "Also write the comparison to FILE.csv or FILE.json");
  return compare;
}

}  // namespace convbench
