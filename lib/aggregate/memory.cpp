// The memory model (docs/memory-model.md) and budget-aware selection.
//
// Per pass:    total = x + w + y + workspace, the workspace from the algorithm's own plan
//              (the exact figure Plan::run checks its workspace against), never a formula.
// Per network: training  = W + dW + S W + sum_l rep_l x_l + max_l (x_l + y_l) + max WS
//              inference = W + max_l (x_l + y_l) + max WS (forward cases only)
//              with W = sum_l rep_l w_l, S = optimizer states per weight.
#include "convlab/memory.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"

namespace convlab {

constexpr auto kMemorySourceNames = enum_names<MemorySource::unavailable>({
    {MemorySource::plan, "plan"},
    {MemorySource::unsupported, "unsupported"},
    {MemorySource::unavailable, "unavailable"},
});

const char* to_string(MemorySource source) noexcept { return name_of(kMemorySourceNames, source); }

RoleNames role_names(Pass pass) noexcept {
  switch (pass) {
    case Pass::forward:
      return {"x", "w", "y"};
    case Pass::backward_data:
      return {"dx", "w", "dy"};
    case Pass::backward_filter:
      return {"x", "dw", "dy"};
  }
  return {"x", "w", "y"};
}

int64_t PassMemory::total() const {
  if (!known()) {
    throw Error(
        source == MemorySource::unsupported ? ErrorCode::unsupported : ErrorCode::unavailable,
        algorithm + " " + to_string(pass) + " " + problem.descriptor() +
            ": no workspace figure: " + reason);
  }
  return checked_add(tensors.total(), workspace, "pass memory");
}

PassMemory pass_memory(const Algorithm& algorithm, const ConvProblem& problem, Pass pass,
                       const KnobValues& knobs) {
  problem.validate();
  PassMemory m;
  m.algorithm = algorithm.name();
  m.problem = problem;
  m.pass = pass;
  m.tensors = problem.tensor_bytes();
  const Support available = algorithm.available();
  if (!available) {
    m.source = MemorySource::unavailable;
    m.reason = available.reason;
    return m;
  }
  const Support supported = algorithm.supports(problem, pass);
  if (!supported) {
    m.source = MemorySource::unsupported;
    m.reason = supported.reason;
    return m;
  }
  try {
    const std::unique_ptr<Plan> plan = algorithm.plan(problem, pass, knobs);
    const std::size_t ws = plan->workspace_bytes();
    if (ws > static_cast<std::size_t>(std::numeric_limits<int64_t>::max())) {
      throw Error(ErrorCode::backend, "workspace of " + std::to_string(ws) + " bytes overflows");
    }
    m.workspace = static_cast<int64_t>(ws);
    m.notes = plan->notes();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_problem) throw;
    // A plan that cannot be made here (supports() said yes, but planning met a limit of
    // this machine or library) leaves the case without a figure, with the reason.
    m.source =
        e.code() == ErrorCode::unsupported ? MemorySource::unsupported : MemorySource::unavailable;
    m.reason = std::string("planning failed (") + to_string(e.code()) + "): " + e.what();
  }
  return m;
}

int64_t NetworkMemory::total() const {
  if (!complete()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : "; ") + m;
    throw Error(ErrorCode::unsupported,
                "network memory at batch " + std::to_string(batch) + " is incomplete: " + list);
  }
  int64_t sum = 0;
  for (int64_t term :
       {weights, weight_gradients, optimizer_state, activations, gradient_buffers, workspace}) {
    sum = checked_add(sum, term, "network memory");
  }
  return sum;
}

namespace {

// Batches above a bisection boundary that largest_batch() also tries (docs/memory-model.md).
constexpr int64_t kBatchWindow = 32;

// The terms of the network total that are tensors, not workspaces, at a batch: weights,
// gradients, optimizer state, kept activations, gradient buffers. No plans needed.
int64_t tensor_terms(const std::vector<Layer>& suite, int64_t batch,
                     const NetworkOptions& options) {
  int64_t weights = 0, kept = 0, live = 0;
  for (const Layer& layer : suite) {
    ConvProblem p = layer.problem;
    p.n = batch;
    p.validate();
    const int64_t rep = std::max<int64_t>(layer.repeat, 1);
    weights = checked_add(weights, checked_mul(rep, p.w_bytes(), "weights"), "weights");
    kept = checked_add(kept, checked_mul(rep, p.x_bytes(), "activations"), "activations");
    live = std::max(live, checked_add(p.x_bytes(), p.y_bytes(), "activations"));
  }
  if (!options.training) return checked_add(weights, live, "network memory");
  const int64_t params = checked_mul(checked_add(2, options.optimizer_states, "optimizer states"),
                                     weights, "weights and optimizer state");
  return checked_add(checked_add(params, kept, "network memory"), live, "network memory");
}

}  // namespace

NetworkMemory network_memory(const std::vector<Layer>& suite, int64_t batch,
                             const std::vector<const Algorithm*>& preference,
                             const NetworkOptions& options) {
  if (suite.empty()) throw Error(ErrorCode::invalid_argument, "network memory of an empty suite");
  if (preference.empty()) {
    throw Error(ErrorCode::invalid_argument, "network memory needs at least one algorithm");
  }
  if (batch < 1) {
    throw Error(ErrorCode::invalid_argument,
                "batch must be at least 1, got " + std::to_string(batch));
  }
  if (options.optimizer_states < 0) {
    throw Error(ErrorCode::invalid_argument,
                "optimizer states must be >= 0, got " + std::to_string(options.optimizer_states));
  }
  NetworkMemory net;
  net.batch = batch;
  net.training = options.training;
  std::vector<Pass> passes = {Pass::forward};
  if (options.training) passes = {Pass::forward, Pass::backward_data, Pass::backward_filter};
  int64_t kept = 0, live_max = 0;
  for (size_t i = 0; i < suite.size(); ++i) {
    const Layer& layer = suite[i];
    ConvProblem p = layer.problem;
    p.n = batch;
    p.validate();
    const std::string label = layer.name.empty() ? "layer " + std::to_string(i + 1) : layer.name;
    const int64_t rep = std::max<int64_t>(layer.repeat, 1);
    net.weights = checked_add(net.weights, checked_mul(rep, p.w_bytes(), "weights"), "weights");
    kept = checked_add(kept, checked_mul(rep, p.x_bytes(), "activations"), "activations");
    live_max = std::max(live_max, checked_add(p.x_bytes(), p.y_bytes(), "activations"));
    for (Pass pass : passes) {
      std::string reasons;
      bool found = false;
      for (const Algorithm* a : preference) {
        PassMemory m = pass_memory(*a, p, pass);
        if (m.known()) {
          if (net.workspace_case.empty() || m.workspace > net.workspace) {
            net.workspace = m.workspace;
            net.workspace_case = label + " " + to_string(pass) + " " + a->name();
          }
          net.cases.push_back(std::move(m));
          found = true;
          break;
        }
        reasons += (reasons.empty() ? "" : "; ") + a->name() + ": " + m.reason;
      }
      if (!found) net.missing.push_back(label + " " + to_string(pass) + ": " + reasons);
    }
  }
  if (options.training) {
    net.weight_gradients = net.weights;
    net.optimizer_state = checked_mul(options.optimizer_states, net.weights, "optimizer state");
    net.activations = kept;
    net.gradient_buffers = live_max;
  } else {
    net.activations = live_max;
  }
  return net;
}

BatchFit largest_batch(const std::vector<Layer>& suite,
                       const std::vector<const Algorithm*>& preference, int64_t budget_bytes,
                       const NetworkOptions& options, int64_t max_batch) {
  if (budget_bytes < 1) {
    throw Error(ErrorCode::invalid_argument,
                "memory budget must be positive, got " + std::to_string(budget_bytes));
  }
  if (max_batch < 1) {
    throw Error(ErrorCode::invalid_argument,
                "largest batch to try must be >= 1, got " + std::to_string(max_batch));
  }
  BatchFit fit;
  auto fits = [&](int64_t batch, NetworkMemory* out) {
    NetworkMemory m = network_memory(suite, batch, preference, options);
    const bool ok = m.complete() && m.total() <= budget_bytes;
    if (out) *out = std::move(m);
    return ok;
  };
  // The tensor terms alone never shrink as the batch grows, and bound the total from below:
  // no batch above b_max (the largest whose tensor terms fit) can fit. They need no plans.
  auto tensors_fit = [&](int64_t batch) {
    return tensor_terms(suite, batch, options) <= budget_bytes;
  };
  if (!tensors_fit(1)) {
    fit.memory = network_memory(suite, 1, preference, options);
    return fit;
  }
  int64_t b_max = 1;
  {
    int64_t hi = 0;
    while (hi == 0 && b_max < max_batch) {
      const int64_t next = b_max > max_batch / 2 ? max_batch : b_max * 2;
      if (tensors_fit(next)) {
        b_max = next;
      } else {
        hi = next;
      }
    }
    while (hi != 0 && hi - b_max > 1) {
      const int64_t mid = b_max + (hi - b_max) / 2;
      (tensors_fit(mid) ? b_max : hi) = mid;
    }
  }
  NetworkMemory best;
  int64_t lo = 0;  // the largest batch known to fit (0: none yet)
  if (fits(b_max, &best)) {
    lo = b_max;
  } else {
    // Bisection on (lo, hi]: hi does not fit. It finds a boundary (lo fits, lo + 1 does
    // not), which is the answer when the workspace never shrinks as the batch grows.
    int64_t hi = b_max;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      NetworkMemory m;
      if (fits(mid, &m)) {
        lo = mid;
        best = std::move(m);
      } else {
        hi = mid;
      }
    }
    // Some workspaces do shrink a little as the batch grows (cpu.im2col's depends on how
    // the batch splits among threads), so a batch past the boundary may fit again: scan a
    // window above the last batch found to fit.
    for (int64_t b = hi + 1; b < b_max && b <= std::max(lo, hi) + kBatchWindow; ++b) {
      NetworkMemory m;
      if (fits(b, &m)) {
        lo = b;
        best = std::move(m);
      }
    }
  }
  fit.batch = lo;
  fit.capped = lo == max_batch;
  if (!fit.capped) {
    const NetworkMemory next = network_memory(suite, lo + 1, preference, options);
    fit.limit = next.complete() ? "memory" : next.missing.front();
  }
  fit.memory = lo > 0 ? std::move(best) : network_memory(suite, 1, preference, options);
  return fit;
}

namespace {

std::string timing_key(const ConvProblem& problem, Pass pass, std::string_view algorithm) {
  return problem.descriptor() + "|" + to_string(pass) + "|" + std::string(algorithm);
}

}  // namespace

TimingTable::TimingTable(const std::vector<MeasuredTime>& times) {
  for (const MeasuredTime& t : times) add(t.problem, t.pass, t.algorithm, t.time_ms);
}

void TimingTable::add(const ConvProblem& problem, Pass pass, std::string_view algorithm,
                      double time_ms) {
  if (!(time_ms > 0) || !std::isfinite(time_ms)) {
    throw Error(ErrorCode::invalid_argument,
                "measured time of " + std::string(algorithm) + " " + to_string(pass) + " " +
                    problem.descriptor() + " must be positive, got " + std::to_string(time_ms));
  }
  times_[timing_key(problem, pass, algorithm)] = time_ms;
}

std::optional<double> TimingTable::find(const ConvProblem& problem, Pass pass,
                                        std::string_view algorithm) const {
  auto it = times_.find(timing_key(problem, pass, algorithm));
  if (it == times_.end()) return std::nullopt;
  return it->second;
}

constexpr auto kCandidateStatusNames = enum_names<Candidate::Status::not_measured>({
    {Candidate::Status::fits, "fits"},
    {Candidate::Status::over_budget, "over_budget"},
    {Candidate::Status::unsupported, "unsupported"},
    {Candidate::Status::unavailable, "unavailable"},
    {Candidate::Status::not_measured, "not_measured"},
});

const char* to_string(Candidate::Status status) noexcept {
  return name_of(kCandidateStatusNames, status);
}

std::string Selection::describe() const {
  std::ostringstream out;
  char time[32];
  if (chosen) {
    std::snprintf(time, sizeof time, "%.4g ms", time_ms);
    for (const Candidate& c : candidates) {
      if (c.algorithm == chosen) {
        out << chosen->name() << " (" << time << (measured ? " measured, " : " predicted, ")
            << format_size(c.memory.total()) << ")";
      }
    }
  } else {
    out << "nothing fits";
  }
  for (const Candidate& c : candidates) {
    if (c.algorithm == chosen) continue;
    out << "; " << c.algorithm->name() << " " << to_string(c.status);
    if (c.status == Candidate::Status::over_budget)
      out << " (" << format_size(c.memory.total()) << ")";
  }
  return out.str();
}

Selection select(const ConvProblem& problem, Pass pass, int64_t budget_bytes,
                 const TimingTable* timings, const SelectOptions& options) {
  if (budget_bytes < 1) {
    throw Error(ErrorCode::invalid_argument,
                "memory budget must be positive, got " + std::to_string(budget_bytes));
  }
  std::vector<const Algorithm*> pool = options.candidates;
  if (pool.empty()) {
    for (const Algorithm* a : registry().all()) {
      if (a->info().family != Family::reference) pool.push_back(a);
    }
  }
  Selection sel;
  bool any_measured = false;
  for (const Algorithm* a : pool) {
    Candidate c;
    c.algorithm = a;
    c.memory = pass_memory(*a, problem, pass);
    if (c.memory.source == MemorySource::unsupported) {
      c.status = Candidate::Status::unsupported;
    } else if (c.memory.source == MemorySource::unavailable) {
      c.status = Candidate::Status::unavailable;
    } else if (c.memory.total() > budget_bytes) {
      c.status = Candidate::Status::over_budget;
    } else if (timings) {
      if (std::optional<double> t = timings->find(problem, pass, a->name())) {
        c.time_ms = *t;
        c.measured = true;
        any_measured = true;
      }
    }
    sel.candidates.push_back(std::move(c));
  }
  for (Candidate& c : sel.candidates) {
    if (c.status != Candidate::Status::fits || c.measured) continue;
    if (any_measured) {
      c.status = Candidate::Status::not_measured;
      continue;
    }
    if (!options.card) {
      throw Error(ErrorCode::invalid_argument,
                  "select " + std::string(to_string(pass)) + " " + problem.descriptor() + ": " +
                      c.algorithm->name() +
                      " fits but has no measured time, and no card was given to predict on");
    }
    c.time_ms =
        predict(c.algorithm->info(), problem, pass, *options.card, options.calibration).time_ms;
  }
  for (const Candidate& c : sel.candidates) {
    if (c.status != Candidate::Status::fits) continue;
    if (!sel.chosen || c.time_ms < sel.time_ms) {
      sel.chosen = c.algorithm;
      sel.time_ms = c.time_ms;
      sel.measured = c.measured;
    }
  }
  return sel;
}

}  // namespace convlab
