// Google Benchmark of cpu.onednn on the layers issue 3 compares against, all three passes.
// Each benchmark plans once, then times Plan::run (reorders included, as convbench does);
// the counter primitive_ms is the convolution primitive alone, read from the plan's notes(),
// and reorder_ms the rest of run(). Threads follow CONVLAB_NUM_THREADS (default: all cores).
//
//   CONVLAB_NUM_THREADS=2 build/bench/micro/onednn_conv --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"

namespace {

// "last run X ms, of which primitive Y ms" in cpu.onednn's notes().
bool read_split(const std::string& notes, double& total_ms, double& primitive_ms) {
  const auto at = notes.find("last run ");
  if (at == std::string::npos) return false;
  const char* text = notes.c_str() + at + 9;
  char* end = nullptr;
  total_ms = std::strtod(text, &end);
  const auto of = notes.find("primitive ", at);
  if (of == std::string::npos) return false;
  primitive_ms = std::strtod(notes.c_str() + of + 10, nullptr);
  return true;
}

void run_case(benchmark::State& state, const std::string& descriptor, convlab::Pass pass) {
  using namespace convlab;
  const ConvProblem problem = parse_descriptor(descriptor).problem;
  const Algorithm& algorithm = registry().get("cpu.onednn");
  auto plan = algorithm.plan(problem, pass);
  const HostTensors host = make_inputs(problem, pass, 1);
  CaseBuffers buffers(algorithm.context(), problem, host, plan->workspace_bytes());
  plan->run(buffers.tensors(), buffers.workspace());  // warm-up: first-touch of the workspace
  double primitive_sum = 0, total_sum = 0;
  for (auto _ : state) {
    plan->run(buffers.tensors(), buffers.workspace());
    state.PauseTiming();
    double total = 0, primitive = 0;
    if (read_split(plan->notes(), total, primitive)) {
      total_sum += total;
      primitive_sum += primitive;
    }
    state.ResumeTiming();
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["primitive_ms"] = primitive_sum / iterations;
  state.counters["reorder_ms"] = (total_sum - primitive_sum) / iterations;
  state.counters["GFLOPs"] = benchmark::Counter(static_cast<double>(problem.flops(pass)),
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_MiB"] = static_cast<double>(plan->workspace_bytes()) / (1 << 20);
  state.SetLabel(plan->notes().substr(0, plan->notes().find(';')));
}

const std::vector<std::string> kLayers = {
    "mb16ic32ih64oc32kh9",
    "mb16ic32ih64oc32kh13",
    "mb16ic64ih56oc64kh3ph1",
    "mb16ic96ih27oc256kh5ph2",
};

const int kRegistered = [] {
  for (const std::string& layer : kLayers) {
    for (convlab::Pass pass :
         {convlab::Pass::forward, convlab::Pass::backward_data, convlab::Pass::backward_filter}) {
      benchmark::RegisterBenchmark(("cpu.onednn/" + layer + "/" + to_string(pass)).c_str(),
                                   run_case, layer, pass)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
