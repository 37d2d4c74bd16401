#include "sweep/workers.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "convlab/error.hpp"
#include "convlab/text_input.hpp"
#include "output/output_file.hpp"
#include "output/progress.hpp"
#include "sweep/signals.hpp"

namespace convbench {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> parse_devices(const std::string& text) {
  std::vector<std::string> devices;
  for (std::string_view item : convlab::split_list(text)) {
    const std::string d(item);
    if (d.empty() || d.size() > 4 || d.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError("--devices '" + text + "': expected device numbers, e.g. 0,1");
    }
    if (std::find(devices.begin(), devices.end(), d) != devices.end()) {
      throw UsageError("--devices '" + text + "': device " + d + " given twice");
    }
    devices.push_back(d);
  }
  return devices;
}

}  // namespace

std::vector<std::string> worker_arguments(const std::vector<std::string>& argv,
                                          const std::string& part, const std::string& worker,
                                          const std::string& device) {
  std::vector<std::string> args;
  for (size_t i = 1; i < argv.size(); ++i) {
    bool dropped = false;
    for (const char* flag : {"--devices", "--device", "--out", "--format"}) {
      if (argv[i] == flag) {
        ++i;  // and its value
        dropped = true;
      } else if (argv[i].rfind(std::string(flag) + "=", 0) == 0) {
        dropped = true;
      }
    }
    if (!dropped) args.push_back(argv[i]);
  }
  args.insert(args.end(),
              {"--out", part, "--format", "csv", "--worker", worker, "--device", device});
  return args;
}

namespace {

pid_t start_worker(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw convlab::Error(convlab::ErrorCode::io,
                         std::string("cannot start a worker: fork: ") + std::strerror(errno));
  }
  if (pid > 0) return pid;
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, STDOUT_FILENO);  // its rows go to its part file
  std::vector<char*> c_args;
  static const std::string self = "convbench";
  c_args.push_back(const_cast<char*>(self.c_str()));
  for (const std::string& a : args) c_args.push_back(const_cast<char*>(a.c_str()));
  c_args.push_back(nullptr);
  ::execv("/proc/self/exe", c_args.data());
  std::fprintf(stderr, "convbench: cannot run a worker: %s\n", std::strerror(errno));
  ::_exit(2);
}

nlohmann::ordered_json typed(const std::string& value) {
  if (!value.empty() && value.size() < 18 &&
      value.find_first_not_of("0123456789") == std::string::npos) {
    return std::stoll(value);
  }
  char* end = nullptr;
  const double d = std::strtod(value.c_str(), &end);
  if (!value.empty() && end == value.c_str() + value.size() &&
      value.find_first_of(".eE") != std::string::npos) {
    return d;
  }
  return value;
}

size_t count_rows(const std::string& path) {
  std::ifstream in(path);
  size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') ++rows;
  }
  return rows > 0 ? rows - 1 : 0;  // the header
}

}  // namespace

Summary write_sweep(std::ostream& out, Format format, const std::vector<SweepFile>& files,
                    const std::vector<std::vector<bool>>& skip,
                    const std::vector<std::string>& drop,
                    const std::vector<std::pair<std::string, std::string>>& extra) {
  Context context = Context::object();
  bool check = false;
  for (const auto& [key, value] : files.front().meta) {
    if (std::find(drop.begin(), drop.end(), key) != drop.end()) continue;
    if (key == "command") {
      for (const auto& [k, v] : extra) context[k] = typed(v);
    }
    context[key] = typed(value);
    if (key == "check") check = value != "off";
  }
  for (const auto& [k, v] : extra) context[k] = typed(v);
  std::unique_ptr<Reporter> reporter = make_reporter(format, out, check);
  reporter->begin(context, {});
  Summary summary;
  for (size_t f = 0; f < files.size(); ++f) {
    for (size_t i = 0; i < files[f].rows.size(); ++i) {
      if (f < skip.size() && i < skip[f].size() && skip[f][i]) continue;
      const Row row = row_from_file(files[f], i);
      if (row.algorithm != "select") summary.add(row);
      reporter->add(row);
    }
  }
  reporter->end(summary);
  return summary;
}

int run_with_workers(const RunOptions& o) {
  const std::vector<std::string> devices = parse_devices(*o.devices);
  if (o.device) {
    throw UsageError("--device " + *o.device + " and --devices " + *o.devices +
                     ": give one (--devices sets each worker's --device)");
  }
  std::string base;
  // Locked from the start, so that a second sweep with this --out stops before its workers do.
  std::unique_ptr<OutputFile> output;
  if (o.out) output = std::make_unique<OutputFile>(*o.out, "--out", OutputFile::OnAbandon::remove);
  if (o.out) {
    base = *o.out;
  } else {
    char dir[] = "/tmp/convbench-workers-XXXXXX";
    if (!::mkdtemp(dir)) {
      throw convlab::Error(
          convlab::ErrorCode::io,
          std::string("cannot make a folder for the workers: ") + std::strerror(errno));
    }
    base = std::string(dir) + "/sweep.csv";
  }
  const size_t n = devices.size();
  std::vector<std::string> parts;
  std::vector<pid_t> pids;
  for (size_t d = 0; d < n; ++d) {
    parts.push_back(base + ".worker" + std::to_string(d + 1) + ".csv");
    const std::string worker = std::to_string(d + 1) + "/" + std::to_string(n);
    pids.push_back(start_worker(worker_arguments(o.argv, parts.back(), worker, devices[d])));
  }
  std::cerr << "convbench: " << n << " worker" << (n == 1 ? "" : "s") << " on device"
            << (n == 1 ? " " : "s ") << *o.devices << "; their rows in " << base
            << ".worker*.csv\n";
  // Wait; on a terminal, count the rows the workers have written as the progress line.
  install_interrupt_handlers();
  ProgressLine progress(::isatty(STDERR_FILENO));
  std::vector<int> status(n, -1);
  size_t running = n;
  bool forwarded = false;
  while (running > 0) {
    if (interrupted() && !forwarded) {
      // A signal to this process alone (not the terminal's whole group) reaches the workers
      // too: each finishes its row and stops.
      for (size_t d = 0; d < n; ++d) {
        if (status[d] == -1) ::kill(pids[d], interrupt_signal());
      }
      forwarded = true;
    }
    for (size_t d = 0; d < n; ++d) {
      if (status[d] != -1) continue;
      int s = 0;
      const pid_t r = ::waitpid(pids[d], &s, WNOHANG);
      if (r == pids[d]) {
        status[d] = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
        --running;
      }
    }
    if (running == 0) break;
    if (progress.shown()) {  // reading the workers' files only for a line someone sees
      size_t rows = 0;
      for (const std::string& p : parts) rows += count_rows(partial_path(p));
      progress.show(std::to_string(rows) + " rows from " + std::to_string(n) + " workers (" +
                    std::to_string(running) + " running)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  progress.clear();
  int worst = 0;
  for (size_t d = 0; d < n; ++d) {
    if (status[d] == 2) return 2;  // bad input: the worker said what
    worst = std::max(worst, status[d]);
  }
  std::vector<SweepFile> files;
  std::set<std::string> device_names;
  for (const std::string& p : parts) {
    // A worker that finished renamed its .partial to p; an interrupted one left the .partial.
    const std::string path = fs::exists(p) ? p : partial_path(p);
    if (!fs::exists(path)) continue;
    files.push_back(read_sweep_file(path));
    if (const std::string* v = files.back().meta_value("devices")) device_names.insert(*v);
  }
  if (files.empty()) {
    throw convlab::Error(convlab::ErrorCode::io, "no worker wrote any row");
  }
  std::string devices_text;
  for (const std::string& d : device_names) devices_text += (devices_text.empty() ? "" : "; ") + d;
  const std::vector<std::string> drop = {"worker", "shard_cases", "devices"};
  std::vector<std::pair<std::string, std::string>> extra = {
      {"devices", devices_text}, {"workers", std::to_string(n) + " (devices " + *o.devices + ")"}};
  const Format stdout_format = !o.format             ? Format::table
                               : *o.format == "csv"  ? Format::csv
                               : *o.format == "json" ? Format::json
                                                     : Format::table;
  const Summary summary = write_sweep(std::cout, stdout_format, files, {}, drop, extra);
  // As run --out: the merged rows replace FILE only when the workers finished.
  const bool finished = worst < 128 && !interrupted();
  if (o.out && finished) {
    std::string suffix = fs::path(*o.out).extension().string();
    const Format format = suffix == ".json" ? Format::json : Format::csv;
    write_sweep(output->begin(), format, files, {}, drop, extra);
    output->commit();
  }
  std::cerr << "convbench: " << summary.line() << " from " << n << " workers";
  if (o.out && finished) std::cerr << "; rows in " << *o.out;
  std::cerr << "\n";
  if (!finished) {
    std::cerr << "convbench: interrupted; the workers' rows stay in " << base
              << ".worker*.csv.partial: continue with the same command and --resume\n";
    return worst >= 128 ? worst : 130;
  }
  for (const std::string& p : parts) {
    fs::remove(p);
    fs::remove(partial_path(p));
  }
  return worst;
}

}  // namespace convbench
