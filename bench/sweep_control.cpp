// The sweep control of `convbench run` (bench/sweep_control.hpp): shards, --vary, the
// metadata keys, budgets, signals and the progress line.
#include "sweep_control.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/knobs.hpp"
#include "convlab/registry.hpp"

namespace convbench {

namespace {

int64_t parse_count(const std::string& text, const std::string& what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 12) {
    throw UsageError(what + ": '" + text + "' is not a non-negative integer");
  }
  return std::stoll(text);
}

}  // namespace

Shard parse_shard(const std::string& text, const std::string& flag) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    throw UsageError(flag + " '" + text + "': expected I/N, e.g. 2/8 (part 2 of 8)");
  }
  Shard s;
  s.index = parse_count(text.substr(0, slash), flag + " '" + text + "' index");
  s.count = parse_count(text.substr(slash + 1), flag + " '" + text + "' count");
  if (s.count < 1 || s.index < 1 || s.index > s.count) {
    throw UsageError(flag + " '" + text + "': need 1 <= I <= N");
  }
  return s;
}

std::optional<Shard> resolve_shard(const std::optional<std::string>& flag) {
  if (flag) {
    Shard s = parse_shard(*flag, "--shard");
    s.source = "--shard " + s.text();
    return s;
  }
  const auto id = convlab::environment_placement("SLURM_ARRAY_TASK_ID");
  const auto count = convlab::environment_placement("SLURM_ARRAY_TASK_COUNT");
  if (!id || !count) return std::nullopt;
  std::string source;
  auto env = [&source](const char* name, const char* fallback) {
    const auto v = convlab::environment_placement(name);
    if (v) source += (source.empty() ? "" : " ") + std::string(name) + "=" + *v;
    return parse_count(v.value_or(fallback), std::string("environment variable ") + name);
  };
  const int64_t task = env("SLURM_ARRAY_TASK_ID", "0");
  const int64_t n = env("SLURM_ARRAY_TASK_COUNT", "0");
  const int64_t min = env("SLURM_ARRAY_TASK_MIN", "0");
  const int64_t step = std::max<int64_t>(env("SLURM_ARRAY_TASK_STEP", "1"), 1);
  const int64_t index = (task - min) / step + 1;
  if (n < 1 || task < min || (task - min) % step != 0 || index > n) {
    throw UsageError("cannot take a shard from SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                     ", SLURM_ARRAY_TASK_COUNT=" + std::to_string(n) + ", MIN=" +
                     std::to_string(min) + ", STEP=" + std::to_string(step) + ": give --shard I/N");
  }
  return Shard{index, n, source};
}

std::vector<Case> take_part(const std::vector<Case>& cases, const Shard& part) {
  std::vector<Case> out;
  int64_t group = -1;
  const Case* previous = nullptr;
  for (const Case& c : cases) {
    if (!previous || c.layer_index != previous->layer_index || c.pass != previous->pass) ++group;
    previous = &c;
    if (group % part.count + 1 == part.index) out.push_back(c);
  }
  return out;
}

VaryAxis parse_vary(const std::string& text) {
  static const char* const kFields[] = {"mb", "g",  "ic", "ih", "iw", "oc", "oh", "ow",
                                        "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};
  const std::string where = "--vary '" + text + "'";
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw UsageError(where + ": expected FIELD=START:STOP[:STEP]");
  VaryAxis axis;
  axis.text = text;
  axis.field = text.substr(0, eq);
  if (std::find(std::begin(kFields), std::end(kFields), axis.field) == std::end(kFields)) {
    throw UsageError(where + ": unknown field '" + axis.field +
                     "'; known: mb g ic ih iw oc oh ow kh kw sh sw ph pw dh dw");
  }
  std::vector<std::string> parts;
  std::stringstream range(text.substr(eq + 1));
  for (std::string part; std::getline(range, part, ':');) parts.push_back(part);
  if (parts.size() < 2 || parts.size() > 3) {
    throw UsageError(where + ": expected START:STOP or START:STOP:STEP");
  }
  const int64_t start = parse_count(parts[0], where + " start");
  const int64_t stop = parse_count(parts[1], where + " stop");
  bool multiply = false;
  int64_t step = 1;
  if (parts.size() == 3) {
    multiply = !parts[2].empty() && parts[2][0] == '*';
    std::string s = parts[2].substr(multiply || (!parts[2].empty() && parts[2][0] == '+'));
    step = parse_count(s, where + " step");
  }
  if (stop < start) throw UsageError(where + ": stop is below start");
  if (multiply ? (step < 2 || start < 1) : step < 1) {
    throw UsageError(
        where + (multiply ? ": a *STEP needs STEP >= 2 and START >= 1" : ": STEP must be >= 1"));
  }
  for (int64_t v = start; v <= stop; v = multiply ? v * step : v + step) {
    axis.values.push_back(v);
    if (axis.values.size() > 10000) throw UsageError(where + ": more than 10000 values");
  }
  return axis;
}

namespace {

// A descriptor as its (key, digits) entries and its name, in order, for substitution.
struct DescriptorParts {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string name;
};

DescriptorParts split_descriptor(const std::string& text) {
  DescriptorParts d;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '_') {
      ++i;
    } else if (text[i] == 'n' && i + 1 < text.size() && text[i + 1] == '"') {
      const size_t close = text.find('"', i + 2);
      d.name = text.substr(i + 2, close == std::string::npos ? std::string::npos : close - i - 2);
      i = close == std::string::npos ? text.size() : close + 1;
    } else {
      size_t k = i;
      while (k < text.size() && std::islower(static_cast<unsigned char>(text[k]))) ++k;
      size_t v = k;
      while (v < text.size() && std::isdigit(static_cast<unsigned char>(text[v]))) ++v;
      d.entries.emplace_back(text.substr(i, k - i), text.substr(k, v - k));
      i = std::max(v, i + 1);
    }
  }
  return d;
}

}  // namespace

void check_vary_size(std::size_t bases, const std::vector<VaryAxis>& axes, int64_t max_cases) {
  // Multiplied with a stop past the cap, so that no product overflows.
  uint64_t combinations = bases;
  std::string factors = std::to_string(bases) + " shapes";
  for (const VaryAxis& a : axes) {
    factors += " x " + std::to_string(a.values.size()) + " " + a.field;
    combinations = combinations > static_cast<uint64_t>(max_cases) ? combinations
                                                                   : combinations * a.values.size();
  }
  if (combinations > static_cast<uint64_t>(max_cases)) {
    throw UsageError("--vary: " + factors + " is more than --max-cases " +
                     std::to_string(max_cases) + " combinations; narrow the ranges or give a " +
                     "larger --max-cases");
  }
}

std::vector<std::string> expand_vary(const std::vector<std::string>& bases,
                                     const std::vector<VaryAxis>& axes,
                                     std::vector<std::string>& skipped) {
  std::vector<std::string> out;
  for (const std::string& base : bases) {
    const convlab::Layer parsed = convlab::parse_descriptor(base);  // a bad base is bad input
    const DescriptorParts parts = split_descriptor(base);
    std::vector<size_t> at(axes.size(), 0);
    while (true) {
      DescriptorParts d = parts;
      std::string label;
      for (size_t a = 0; a < axes.size(); ++a) {
        const std::string value = std::to_string(axes[a].values[at[a]]);
        auto it = std::find_if(d.entries.begin(), d.entries.end(),
                               [&](const auto& e) { return e.first == axes[a].field; });
        if (it != d.entries.end()) {
          it->second = value;
        } else {
          d.entries.emplace_back(axes[a].field, value);
        }
        label += (label.empty() ? "" : " ") + axes[a].field + "=" + value;
      }
      std::string text;
      for (const auto& [key, value] : d.entries) text += key + value;
      const std::string name = parsed.name.empty() ? label : parsed.name + " " + label;
      text += "n\"" + name + "\"";
      try {
        (void)convlab::parse_descriptor(text);
        out.push_back(text);
      } catch (const convlab::Error& e) {
        skipped.push_back(label + ": " + e.what());
      }
      size_t a = 0;
      while (a < axes.size() && ++at[a] == axes[a].values.size()) at[a++] = 0;
      if (a == axes.size()) break;
    }
  }
  return out;
}

namespace {

uint64_t digest_of(const std::vector<Case>& cases) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a: stable across builds and platforms
  for (const Case& c : cases) {
    std::string key = case_identity(c);
    for (const auto& [name, value] : c.knobs) key += "|" + name + "=" + value;
    key += "\n";
    for (unsigned char ch : key) h = (h ^ ch) * 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

void add_sweep_context(Context& context, const RunOptions& o, const std::optional<Budget>& budget,
                       const std::optional<Shard>& shard, const std::optional<Shard>& worker,
                       const std::vector<Case>& sweep, const std::vector<Case>& part) {
  if (!o.vary.empty()) {
    std::string text;
    for (const std::string& v : o.vary) text += (text.empty() ? "" : "; ") + v;
    context["vary"] = text;
  }
  if (budget) context["memory_budget"] = budget->label;
  if (o.select) context["select"] = "on";
  context["sweep_cases"] = static_cast<int64_t>(sweep.size());
  char digest[24];
  std::snprintf(digest, sizeof digest, "%016llx",
                static_cast<unsigned long long>(digest_of(sweep)));
  context["sweep_digest"] = digest;
  if (shard || worker) {
    if (shard) context["shard"] = shard->text(), context["shard_source"] = shard->source;
    if (worker) context["worker"] = worker->text();
    context["shard_cases"] = static_cast<int64_t>(part.size());
  }
}

SweepFile context_as_file(const Context& context) {
  SweepFile f;
  for (const auto& [key, value] : context.items()) f.meta.emplace_back(key, context_text(value));
  for (const Column& c : row_columns()) f.header.push_back(c.name);
  return f;
}

std::string plot_command(const std::string& csv) {
  std::string png = csv;
  if (png.size() > 4 && png.compare(png.size() - 4, 4, ".csv") == 0) png.resize(png.size() - 4);
  png += ".png";
#ifdef CONVBENCH_PLOT_SCRIPT
  const std::string script = CONVBENCH_PLOT_SCRIPT;
#else
  const std::string script = "bench/plot_sweep.py";
#endif
  return "/usr/bin/python3 " + script + " " + csv + " -o " + png;
}

std::optional<Budget> resolve_budget(const RunOptions& o, convlab::CardDatabase& cards) {
  try {
    for (const std::string& file : o.cards) cards.add_json_file(file);
    std::optional<Budget> budget;
    if (o.memory_budget) {
      const int64_t bytes = convlab::parse_size(*o.memory_budget);
      budget = Budget{bytes,
                      convlab::format_size(bytes) + " (--memory-budget " + *o.memory_budget + ")"};
    }
    if (o.card) {
      const convlab::Card& card = cards.get(*o.card);
      if (!budget || card.usable_bytes < budget->bytes) {
        budget = Budget{card.usable_bytes,
                        card.id + " usable " + convlab::format_size(card.usable_bytes)};
      }
    }
    return budget;
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
}

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int signal) {
  g_signal = signal;
  std::signal(signal, SIG_DFL);  // a second signal stops at once
}

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  }
  return text;
}

class ProgressReporter final : public Reporter {
 public:
  explicit ProgressReporter(std::size_t cases) : total_(cases) {}
  void begin(const Context&, const std::vector<Case>&) override {
    start_ = std::chrono::steady_clock::now();
  }
  void case_started(const Case& c) override {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string left = "?";
    if (done_ > 0) left = "~" + clock_text(elapsed / done_ * (total_ - done_));
    const std::string layer = c.layer.name.empty() ? c.layer.problem.descriptor() : c.layer.name;
    std::fprintf(stderr, "\r[%zu/%zu] %s %s %s  elapsed %s  left %s\033[K", done_ + 1, total_,
                 layer.c_str(), convlab::to_string(c.pass), c.algorithm->name().c_str(),
                 clock_text(elapsed).c_str(), left.c_str());
    std::fflush(stderr);
  }
  void add(const Row& row) override {
    if (row.algorithm != "select") ++done_;
  }
  void end(const Summary&) override {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  std::size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}
bool interrupted() { return g_signal != 0; }
int interrupt_signal() { return g_signal; }

std::unique_ptr<Reporter> make_progress_reporter(std::size_t cases) {
  return std::make_unique<ProgressReporter>(cases);
}

}  // namespace convbench
