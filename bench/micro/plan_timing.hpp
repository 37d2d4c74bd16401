#pragma once
// What the micro-benchmarks of registered algorithms share: a plan's run() timed as convbench
// times it (planned once, the workspace touched once before timing), with the phases the
// plan measures itself as counters.

#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/harness.hpp"

namespace micro {

/// Times `algorithm`'s plan of `problem` and `pass`. Counters: each phase of
/// last_run_phases() as NAME_ms (mean per run), GFLOPs (a rate), workspace_MiB; the label is
/// the plan's kernel.
inline void time_plan(benchmark::State& state, const convlab::Algorithm& algorithm,
                      const convlab::ConvProblem& problem, convlab::Pass pass) {
  auto plan = algorithm.plan(problem, pass);
  const convlab::HostTensors host = convlab::make_inputs(problem, pass, 1);
  convlab::CaseBuffers buffers(algorithm.context(), problem, host, plan->workspace_bytes());
  plan->run(buffers.tensors(), buffers.workspace());  // first touch of the workspace
  std::map<std::string, double> phase_sums;
  for (auto _ : state) {
    plan->run(buffers.tensors(), buffers.workspace());
    state.PauseTiming();
    for (const auto& [phase, ms] : plan->last_run_phases()) phase_sums[phase] += ms;
    state.ResumeTiming();
  }
  const double iterations = static_cast<double>(state.iterations());
  for (const auto& [phase, sum] : phase_sums) state.counters[phase + "_ms"] = sum / iterations;
  state.counters["GFLOPs"] = benchmark::Counter(static_cast<double>(problem.flops(pass)),
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_MiB"] = static_cast<double>(plan->workspace_bytes()) / (1 << 20);
  state.SetLabel(plan->info().kernel);
}

}  // namespace micro
