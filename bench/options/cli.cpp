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

CLI::App* add_list_command(CLI::App& app, ListOptions& options) {
  CLI::App* list = app.add_subcommand(
      "list", "List the algorithms (device, availability, determinism) and the built-in suites");
  list->footer(
      "Examples:\n"
      "  convbench list\n"
      "  convbench list --format json\n");
  list->add_option("--format", options.format, "Output format")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return list;
}

CLI::App* add_run_command(CLI::App& app, RunOptions& o) {
  CLI::App* run = app.add_subcommand(
      "run", "Sweep layers x passes x algorithms and report time, memory and accuracy");
  run->footer(
      "Examples:\n"
      "  convbench run --shape mb32ic64ih56oc64kh3ph1 --shape mb32ic128ih28oc128kh3ph1 --passes "
      "fwd "
      "--check\n"
      "  convbench run --suite resnet50 --mb 32 --algos 'cpu.*' --out resnet50.csv\n"
      "  convbench run --suite vgg16 --card gtx970 --select --out vgg16.csv --resume\n"
      "  convbench run --shape mb8ic64ih56oc64kh3ph1 --vary kh=1:7:2 --passes fwd --dry-run\n");
  repeatable(run->add_option("--shape", o.shapes,
                             "A benchdnn descriptor, e.g. mb32ic64ih56oc64kh3ph1, once per "
                             "--shape"),
             "DESCRIPTOR")
      ->take_all()
      ->type_size(1)
      ->allow_extra_args(false);
  repeatable(run->add_option("--batch-file", o.batch_files, "A benchdnn shape file"), "FILE")
      ->allow_extra_args(false);
  repeatable(run->add_option("--suite", o.suites,
                             "A built-in suite, or 'all'; also comma-separated; see 'list'"),
             "NAME")
      ->delimiter(',')
      ->allow_extra_args(false);
  run->add_option("--mb", o.mb, "Minibatch for every layer, 1 to 2^40 (overrides the shape's mb)")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40).description(""));
  run->add_option("--algos", o.algos,
                  "Comma-separated algorithm names or globs, e.g. 'cpu.*,reference' "
                  "(default: every available algorithm; reference only with --check)")
      ->type_name("GLOBS");
  run->add_option(
         "--match", o.match,
         "Only the layers whose name contains a match of REGEX (ECMAScript), e.g. 'conv[45]_'")
      ->type_name("REGEX");
  run->add_option("--passes", o.passes, "Comma-separated passes: fwd, bwd_data, bwd_filter")
      ->type_name("LIST")
      ->capture_default_str();
  run->add_option("--reps", o.reps, "Timed repetitions per case, 1 to 10^6 (median, min, max)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000).description(""))
      ->capture_default_str();
  run->add_option("--warmup", o.warmup, "Untimed runs before the timed ones, 0 to 10^6")
      ->type_name("N")
      ->check(CLI::Range(0, 1000000).description(""))
      ->capture_default_str();
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
  run->add_flag("--check{auto}", o.check_scope,
                "Compare each output with the reference; outside the error bound = error. "
                "--check=full recomputes every output, --check=sampled[:N] N outputs per "
                "tensor (default 1000) chosen at random from the seed, each exactly in double; "
                "--check (auto) is full up to 2^28 multiply-adds per pass, sampled beyond")
      ->type_name("SCOPE")
      ->each([&o](const std::string&) { o.check = true; });
  run->add_option("--format", o.format, "Format on stdout (default table)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  run->add_option("--out", o.out,
                  "Also write the rows to FILE: CSV or JSON by its suffix (.csv, .json) or "
                  "by --format")
      ->type_name("FILE");
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
  return run;
}

}  // namespace convbench
