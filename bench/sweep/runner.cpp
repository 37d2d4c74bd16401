#include "sweep/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "convlab/cards.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "output/dump.hpp"
#include "sweep/idle_threads.hpp"
#include "sweep/inputs.hpp"

namespace convbench {

Row make_row(const Case& c) {
  Row row;
  row.suite = c.suite;
  row.layer = c.layer.name;
  row.descriptor = c.layer.problem.descriptor();
  row.pass = convlab::to_string(c.pass);
  row.algorithm = c.algorithm->name();
  row.device = convlab::to_string(c.algorithm->device());
  const convlab::AlgorithmInfo& info = c.algorithm->info();
  row.family = convlab::to_string(info.family);
  row.math_mode = convlab::to_string(info.math_mode);
  try {
    row.knobs = convlab::format_knobs(convlab::resolve_knobs(info.name, info.knobs, c.knobs));
  } catch (const convlab::Error&) {
    row.knobs = convlab::format_knobs(c.knobs);  // run_case reports the bad knob
  }
  return row;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

namespace {

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

// The sample standard deviation over the mean: the run's own noise, which `convbench compare`
// weighs a difference against. Undefined for one repetition.
std::optional<double> coefficient_of_variation(const std::vector<double>& times) {
  if (times.size() < 2) return std::nullopt;
  double mean = 0;
  for (double t : times) mean += t;
  mean /= static_cast<double>(times.size());
  if (!(mean > 0)) return std::nullopt;
  double squares = 0;
  for (double t : times) squares += (t - mean) * (t - mean);
  return std::sqrt(squares / static_cast<double>(times.size() - 1)) / mean;
}

void mark(Row& row, Status status, const std::string& reason) {
  row.status = status;
  row.reason = one_line(reason);
}

std::string joined_details(const std::vector<std::pair<std::string, std::string>>& details) {
  std::string text;
  for (const auto& [name, value] : details) text += (text.empty() ? "" : ";") + name + "=" + value;
  return text;
}

void record_plan(const convlab::PlanInfo& info, Row& row) {
  row.plan_kernel = info.kernel;
  row.plan_transform = info.transform;
  row.plan_tile = info.tile;
  row.plan_workspace_split = info.format_workspace_split();
  row.plan_details = joined_details(info.details);
  row.knobs = convlab::format_knobs(info.knobs);
  row.math_mode = convlab::to_string(info.math_mode);
}

// Before planning (which may allocate, e.g. FFTW's planning scratch) and before the inputs are
// made: the host memory of the case as a whole, so that a case too large for this machine is
// refused naming all of it and the available figure, instead of by whichever allocation trips
// first or by the OOM killer. The host inputs count unless the cache already holds them; an
// algorithm on the host holds a second copy in its buffers. Its workspace is checked with the
// buffers once the plan has declared it (CaseBuffers).
void check_case_host_memory(const Case& c, const RunSettings& settings, bool on_host) {
  const int64_t tensors = c.layer.problem.tensor_bytes().total();
  const bool held = settings.inputs && settings.inputs->holds(c);
  const int64_t inputs = held ? 0 : tensors;
  const int64_t buffers = on_host ? tensors : 0;
  if (inputs + buffers == 0) return;
  convlab::check_host_memory(
      convlab::checked_add(inputs, buffers, "case host memory"),
      "case " + c.layer.problem.descriptor() + " " + convlab::to_string(c.pass) + " (" +
          (held ? "" : "host inputs " + std::to_string(inputs) + " bytes") +
          (held || !on_host ? "" : " + ") +
          (on_host ? "host buffers " + std::to_string(buffers) + " bytes" : "") + ")");
}

// A case planned, its buffers made and warmed up: what its timed repetitions need.
struct PreparedCase {
  convlab::DeviceContext* context = nullptr;
  std::unique_ptr<convlab::Plan> plan;
  std::optional<InputCache> own_inputs;
  const convlab::HostTensors* host = nullptr;
  uint64_t seed = 0;
  std::unique_ptr<convlab::CaseBuffers> buffers;
  std::vector<double> times;
  double total_ms = 0;

  void run_timed() {
    const convlab::Tensors tensors = buffers->tensors();
    const convlab::Workspace scratch = buffers->workspace();
    times.push_back(context->time_ms([&] { plan->run(tensors, scratch); }));
    total_ms += times.back();
  }
  // Repetitions stop early once they add up to max_time, so one sweep can hold 10 us and 10 s
  // layers alike; the row's reps says how many runs the median is of.
  bool timed_enough(const RunSettings& settings) const {
    return static_cast<int>(times.size()) >= settings.reps ||
           (settings.max_time > 0 && total_ms >= settings.max_time * 1e3);
  }
};

// Everything before the timed repetitions. Null where the algorithm declines the case (the
// row says why); throws what the plan or the buffers throw.
std::unique_ptr<PreparedCase> prepare(const Case& c, const RunSettings& settings, Row& row) {
  const convlab::Algorithm& algorithm = *c.algorithm;
  const convlab::ConvProblem& problem = c.layer.problem;
  const convlab::Support available = algorithm.available();
  if (!available) {
    mark(row, Status::unsupported, available.reason);
    return nullptr;
  }
  const convlab::Support support = algorithm.supports(problem, c.pass);
  if (!support) {
    mark(row, Status::unsupported,
         support.reason.empty() ? "unsupported (no reason given)" : support.reason);
    return nullptr;
  }
  auto prepared = std::make_unique<PreparedCase>();
  // The device the plan runs on is the one its knobs name (a GPU algorithm's `device`, which
  // --device and --devices' workers set), so its tensors and workspace are allocated there.
  convlab::DeviceContext& context = algorithm.plan_context(c.knobs);
  prepared->context = &context;
  check_case_host_memory(c, settings, &context == &convlab::host_context());

  // Planning may allocate and queue device work; it is timed on the host up to a
  // synchronisation, apart from the runs.
  const auto plan_start = std::chrono::steady_clock::now();
  prepared->plan = algorithm.plan(problem, c.pass, c.knobs);
  context.synchronize();
  row.plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          plan_start)
                    .count();
  record_plan(prepared->plan->info(), row);
  const std::size_t workspace = prepared->plan->workspace_bytes();
  row.workspace_bytes = static_cast<int64_t>(workspace);
  if (settings.budget) {
    // Refused before anything is allocated: the row keeps the memory it would have needed.
    const int64_t needed = convlab::checked_add(problem.tensor_bytes().total(),
                                                *row.workspace_bytes, "case memory");
    if (needed > *settings.budget) {
      row.total_bytes = needed;
      throw convlab::Error(convlab::ErrorCode::over_budget,
                           "needs " + convlab::format_size(needed) + " (tensors " +
                               convlab::format_size(problem.tensor_bytes().total()) +
                               " + workspace " + convlab::format_size(*row.workspace_bytes) +
                               "), over the budget of " + settings.budget_label);
    }
  }

  InputCache& inputs = settings.inputs ? *settings.inputs
                                       : prepared->own_inputs.emplace(settings.seed, FillSpec{});
  prepared->seed = inputs.seed_of(c);
  prepared->host = &inputs.get(c);
  prepared->buffers =
      std::make_unique<convlab::CaseBuffers>(context, problem, *prepared->host, workspace);
  row.total_bytes = static_cast<int64_t>(prepared->buffers->device_bytes());
  const convlab::Tensors tensors = prepared->buffers->tensors();
  const convlab::Workspace scratch = prepared->buffers->workspace();
  for (int i = 0; i < settings.warmup; ++i) prepared->plan->run(tensors, scratch);
  context.synchronize();
  return prepared;
}

// The row's statistics, then the optional check and dump.
void finish(const Case& c, const RunSettings& settings, PreparedCase& prepared, Row& row) {
  const std::vector<double>& times = prepared.times;
  row.reps = static_cast<int64_t>(times.size());
  row.time_ms = median(times);
  row.time_ms_min = *std::min_element(times.begin(), times.end());
  row.time_ms_max = *std::max_element(times.begin(), times.end());
  row.cv = coefficient_of_variation(times);
  if (*row.time_ms > 0) {
    row.gflops = static_cast<double>(c.layer.problem.flops(c.pass)) / (*row.time_ms * 1e6);
  }

  // The output checked is the one left by the last timed run: the output was poisoned only
  // before the first run, so an element no run writes stays NaN, and an algorithm that
  // accumulates into its output (beta != 0) drifts further with every run.
  if (!settings.check && !settings.dumper) return;
  const std::vector<float> result = prepared.buffers->download_output(c.pass);
  if (settings.check) {
    const convlab::AccuracyReport report =
        convlab::check_with_reference(c.layer.problem, c.pass, *prepared.host, result,
                                      prepared.plan->error_bound(), settings.check_scope,
                                      prepared.seed);
    row.max_abs_err = report.max_abs_err;
    row.max_rel_err = report.max_rel_err;
    if (!report.within_bound) mark(row, Status::error, "accuracy: " + report.detail);
  }
  if (settings.dumper) settings.dumper->write(c, row, *prepared.host, result, prepared.seed);
}

// Runs `step` for the case whose row this is; what it throws becomes the row's status.
// Returns whether it finished.
template <typename Step>
bool guarded(Row& row, Step&& step) {
  try {
    step();
    return true;
  } catch (const convlab::Error& e) {
    // Refusals are dispositions, not failures: a budget's (the sweep raises it before
    // running), and a plan's that finds what supports() could not know (a library that
    // declines the problem, or cannot run it on this machine), whose reason reads as
    // supports()'s does.
    if (e.code() == convlab::ErrorCode::unsupported) {
      mark(row, Status::unsupported, e.what());
    } else {
      const Status status =
          e.code() == convlab::ErrorCode::over_budget ? Status::over_budget : Status::error;
      mark(row, status, std::string(convlab::to_string(e.code())) + ": " + e.what());
    }
  } catch (const std::exception& e) {
    mark(row, Status::error, std::string("exception: ") + e.what());
  }
  return false;
}

}  // namespace

std::vector<Row> run_cases(const std::vector<Case>& cases, const RunSettings& settings) {
  // Before the cases plan and warm up: a pool OpenBLAS left spinning (after loading, or after
  // the previous case's threaded calls) would take a core from the threads being timed.
  stop_idle_blas_threads();
  std::vector<Row> rows;
  std::vector<std::unique_ptr<PreparedCase>> prepared(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    rows.push_back(make_row(cases[i]));
    guarded(rows[i], [&] { prepared[i] = prepare(cases[i], settings, rows[i]); });
  }
  // One repetition of each case in turn, until each has its own: a slow spell of the machine
  // then falls on every case of the round alike. A case that fails keeps its error row and
  // frees its buffers; the others go on.
  for (bool more = true; more;) {
    more = false;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (!prepared[i] || prepared[i]->timed_enough(settings)) continue;
      if (guarded(rows[i], [&] { prepared[i]->run_timed(); })) {
        more = more || !prepared[i]->timed_enough(settings);
      } else {
        prepared[i].reset();
      }
    }
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (prepared[i]) guarded(rows[i], [&] { finish(cases[i], settings, *prepared[i], rows[i]); });
    prepared[i].reset();
  }
  return rows;
}

Row run_case(const Case& c, const RunSettings& settings) { return run_cases({c}, settings)[0]; }

}  // namespace convbench
