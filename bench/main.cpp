// convbench: sweeps convolution layers over convlab's algorithms (docs/convbench.md).
// Exit status: 0 success (unsupported rows included), 1 a runtime failure or any row with
// status error, 2 bad input (unknown flag or name, bad value, unreadable file, bad descriptor).
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands/commands.hpp"
#include "convlab/text_input.hpp"
#include "options/cli.hpp"
#include "output/checked_stream.hpp"
#include "output/context.hpp"

namespace {

std::string joined(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  return line;
}

// Messages stay on one line: a user sees at once what was wrong, a script greps it. And they
// stay short whatever they quote (a message lists at most the known names, well below this).
std::string one_line(std::string text) {
  for (char& ch : text) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  constexpr std::size_t kMaxMessage = 2000;
  return text.size() > kMaxMessage ? convlab::excerpt(text, kMaxMessage) : text;
}

// No value a user gives is longer than a path (PATH_MAX, 4096): a longer argument is refused
// before it is parsed, so that no message, metadata line or row repeats it at length.
constexpr std::size_t kMaxArgument = 4096;

}  // namespace

namespace {

int dispatch(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.size() > kMaxArgument) {
      std::cerr << "convbench: argument " << i << " '" << convlab::excerpt(arg)
                << "' is longer than " << kMaxArgument << " characters\n";
      return 2;
    }
  }
  CLI::App app{"convbench: which convolution strategy is fastest, and what it costs in memory"};
  app.set_version_flag("--version", std::string("convbench ") + convbench::convbench_version());
  app.require_subcommand(1);
  convbench::ListOptions list_options;
  convbench::RunOptions run_options;
  CLI::App* list = convbench::add_list_command(app, list_options);
  CLI::App* run = convbench::add_run_command(app, run_options);
  run_options.argv.assign(argv, argv + argc);
  convbench::MemoryOptions memory_options;
  convbench::PredictOptions predict_options;
  convbench::MergeOptions merge_options;
  CLI::App* memory = convbench::add_memory_command(app, memory_options);
  CLI::App* predict = convbench::add_predict_command(app, predict_options);
  CLI::App* merge = convbench::add_merge_command(app, merge_options);
  convbench::CompareOptions compare_options;
  CLI::App* compare = convbench::add_compare_command(app, compare_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11 takes an unknown first word for a missing subcommand; name it and the known ones.
    const std::vector<CLI::App*> commands = app.get_subcommands([](CLI::App*) { return true; });
    if (argc > 1 && argv[1][0] != '-') {
      std::string known;
      bool is_known = false;
      for (const CLI::App* c : commands) {
        known += (known.empty() ? "" : ", ") + c->get_name();
        is_known = is_known || c->get_name() == argv[1];
      }
      if (!is_known) {
        std::cerr << "convbench: unknown command '" << argv[1] << "'; known: " << known
                  << " (see convbench --help)\n";
        return 2;
      }
    }
    const bool in_run = run->parsed() || (argc > 1 && std::string(argv[1]) == "run");
    std::cerr << "convbench: " << one_line(e.what()) << " (see convbench " << (in_run ? "run " : "")
              << "--help)\n";
    return 2;
  }
  try {
    if (list->parsed()) return convbench::run_list(list_options);
    if (run->parsed()) return convbench::run_sweep(run_options, joined(argc, argv));
    if (memory->parsed()) return convbench::run_memory(memory_options, joined(argc, argv));
    if (predict->parsed()) return convbench::run_predict(predict_options, joined(argc, argv));
    if (merge->parsed()) return convbench::run_merge(merge_options, joined(argc, argv));
    if (compare->parsed()) return convbench::run_compare(compare_options, joined(argc, argv));
  } catch (const convbench::UsageError& e) {
    std::cerr << "convbench: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "convbench: error: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 2;
}

}  // namespace

// Every byte on stdout goes through a checked buffer: `> /dev/full` or a closed pipe is a
// failure (exit 1, naming stdout and the cause), not a silent exit 0.
int main(int argc, char** argv) {
  convbench::CheckedStdout out;
  int status = dispatch(argc, argv);
  try {
    out.finish();
  } catch (const std::exception& e) {
    std::cerr << "convbench: error: " << one_line(e.what()) << "\n";
    if (status == 0) status = 1;
  }
  return status;
}
