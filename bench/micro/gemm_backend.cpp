// Google Benchmark behind cpu.im2col's choices (docs/strategy-im2col.md):
//  - gemm/<backend>/<pass>/<layer>: the GEMM of one image's column buffer through oneDNN's
//    dnnl_sgemm, OpenBLAS's cblas_sgemm and an Eigen Map product, at the library's thread
//    count (all the threads on one GEMM, as in gemm mode);
//  - strategy/<backend>/<pass>/<layer>: the whole of cpu.im2col (default settings) on each
//    GEMM backend;
//  - im2col/<pass>/<layer>/b<images>/<mode>: the whole strategy (Plan::run) with a fixed
//    images-per-GEMM and parallel mode, to pick the defaults; "auto" is the default setting;
//  - loops/<im2col|col2im>/<layer>: the CPU copy loops for one image, one thread;
//  - conv/<algorithm>/<pass>/<layer>: cpu.im2col as registered next to cpu.onednn (when
//    built), timed the same way in the same process;
//  - share/<algorithm>/<pass>/<layer>: the algorithm's whole pass and a square OpenBLAS SGEMM
//    of kPeakSize (the machine's SGEMM rate at the library's thread count) timed alternately
//    in one loop, so that a loaded machine slows both alike; counter share_of_sgemm = the
//    pass's rate (direct-convolution flops, which for cpu.im2col are exactly its GEMM's)
//    over the SGEMM's. For cpu.im2col it is a lower bound of its GEMM's share of the SGEMM
//    rate: im2col/col2im and staging are in the pass's time.
// GFLOP/s counters use the direct-convolution flop count, as convbench does. With
// --benchmark_repetitions=N a "min" aggregate is added: on a shared machine the fastest
// repetition is the one least disturbed by other work.
//
//   CONVLAB_NUM_THREADS=2 build/bench/micro/gemm_backend --benchmark_min_time=0.5
//   ... --benchmark_filter='^conv/.*fwd' --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "convlab/descriptor.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "lib/cpu/im2col/cpu_im2col.hpp"
#include "lib/cpu/im2col/gemm.hpp"
#include "lib/cpu/im2col/im2col_loops.hpp"
#include "strategy/im2col_index.hpp"

namespace {

using convlab::ConvProblem;
using convlab::Pass;
namespace im2col = convlab::im2col;

struct Layer {
  const char* name;
  const char* descriptor;
};

// ResNet-50's four stride-1 3x3 layers and AlexNet's conv2 at mb 16: large and small images,
// where images per GEMM matter.
const Layer kLayers[] = {
    {"mb16ic64ih56oc64kh3ph1", "mb16ic64ih56oc64kh3ph1"},
    {"mb16ic128ih28oc128kh3ph1", "mb16ic128ih28oc128kh3ph1"},
    {"mb16ic96ih27oc256kh5ph2", "mb16ic96ih27oc256kh5ph2"},
    {"mb16ic256ih14oc256kh3ph1", "mb16ic256ih14oc256kh3ph1"},
    {"mb16ic512ih7oc512kh3ph1", "mb16ic512ih7oc512kh3ph1"},
};

ConvProblem problem_of(const Layer& layer) {
  return convlab::parse_descriptor(layer.descriptor).problem;
}

// GFLOP/s is a rate per repetition; in the "min" aggregate row (the fastest time) read the
// time and the constant GFLOP counter instead, as aggregating rates takes their minimum.
void set_flops(benchmark::State& state, const ConvProblem& p, Pass pass, double scale = 1) {
  const double gflop = double(p.flops(pass)) * scale * 1e-9;
  state.counters["GFLOP/s"] =
      benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP"] = gflop;
}

// One image's GEMM of the pass (b = 1), row-major as cpu.im2col calls it.
void bench_gemm(benchmark::State& state, im2col::GemmBackend backend, const ConvProblem& p,
                Pass pass) {
  const int64_t m = p.k_per_group(), l = p.c_per_group() * p.r * p.s;
  const int64_t cols = p.out_h() * p.out_w();
  std::vector<float> w(size_t(m * l), 0.01f), col(size_t(l * cols), 0.02f);
  std::vector<float> y(size_t(m * cols), 0.03f);
  im2col::set_gemm_threads(backend, convlab::num_threads());
  for (auto _ : state) {
    switch (pass) {
      case Pass::forward:
        im2col::sgemm(backend, false, false, m, cols, l, w.data(), l, col.data(), cols, 0.0f,
                      y.data(), cols);
        break;
      case Pass::backward_data:
        im2col::sgemm(backend, true, false, l, cols, m, w.data(), l, y.data(), cols, 0.0f,
                      col.data(), cols);
        break;
      case Pass::backward_filter:
        im2col::sgemm(backend, false, true, m, l, cols, y.data(), cols, col.data(), cols, 1.0f,
                      w.data(), l);
        break;
    }
    benchmark::ClobberMemory();
  }
  // Flops of one image of one group.
  set_flops(state, p, pass, 1.0 / double(p.n * p.groups));
}

void bench_loops(benchmark::State& state, const ConvProblem& p, bool to_columns) {
  const convlab::Im2colGeometry g = convlab::make_im2col_geometry(p, 1);
  std::vector<float> x(size_t(p.x_elems()), 0.5f), col(size_t(convlab::col_elems(g)), 0.25f);
  for (auto _ : state) {
    if (to_columns) {
      im2col::im2col_cpu(g, x.data(), col.data());
    } else {
      im2col::col2im_cpu(g, col.data(), x.data());
    }
    benchmark::ClobberMemory();
  }
  state.counters["col_MiB"] = double(convlab::col_elems(g)) * sizeof(float) / (1 << 20);
}

void bench_plan(benchmark::State& state, const convlab::Algorithm& algo, const ConvProblem& p,
                Pass pass) {
  auto plan = algo.plan(p, pass);
  const convlab::HostTensors host = convlab::make_inputs(p, pass, 1);
  convlab::CaseBuffers buffers(algo.context(), p, host, plan->workspace_bytes());
  plan->run(buffers.tensors(), buffers.workspace());  // warm-up
  for (auto _ : state) plan->run(buffers.tensors(), buffers.workspace());
  set_flops(state, p, pass);
  state.counters["workspace_MiB"] = double(plan->workspace_bytes()) / (1 << 20);
  state.SetLabel(plan->notes());
}

void bench_strategy(benchmark::State& state, const ConvProblem& p, Pass pass, int64_t images,
                    im2col::ParallelMode mode) {
  im2col::Im2colOptions options;
  options.images_per_gemm = images;
  options.parallel = mode;
  const im2col::CpuIm2col algo(options);
  bench_plan(state, algo, p, pass);
}

void bench_backend(benchmark::State& state, const ConvProblem& p, Pass pass,
                   im2col::GemmBackend backend) {
  im2col::Im2colOptions options;
  options.backend = backend;
  const im2col::CpuIm2col algo(options);
  bench_plan(state, algo, p, pass);
}

void bench_registered(benchmark::State& state, const convlab::Algorithm* algo, const ConvProblem& p,
                      Pass pass) {
  bench_plan(state, *algo, p, pass);
}

// Square SGEMM size for the machine's SGEMM rate: large enough for OpenBLAS's peak, small
// enough (3 x 4 MiB) for a shared machine.
constexpr int64_t kPeakSize = 1024;

void bench_share(benchmark::State& state, const convlab::Algorithm* algo, const ConvProblem& p,
                 Pass pass) {
  using Clock = std::chrono::steady_clock;
  auto plan = algo->plan(p, pass);
  const convlab::HostTensors host = convlab::make_inputs(p, pass, 1);
  convlab::CaseBuffers buffers(algo->context(), p, host, plan->workspace_bytes());
  const auto n = static_cast<size_t>(kPeakSize);
  std::vector<float> a(n * n, 0.01f), b(n * n, 0.02f), c(n * n, 0.0f);
  const auto backend = im2col::GemmBackend::openblas;
  auto peak = [&] {
    im2col::set_gemm_threads(backend, convlab::num_threads());
    im2col::sgemm(backend, false, false, kPeakSize, kPeakSize, kPeakSize, a.data(), kPeakSize,
                  b.data(), kPeakSize, 0.0f, c.data(), kPeakSize);
  };
  plan->run(buffers.tensors(), buffers.workspace());  // warm-up
  peak();
  double conv_s = 0, sgemm_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    plan->run(buffers.tensors(), buffers.workspace());
    const auto t1 = Clock::now();
    peak();
    const auto t2 = Clock::now();
    conv_s += std::chrono::duration<double>(t1 - t0).count();
    sgemm_s += std::chrono::duration<double>(t2 - t1).count();
  }
  const double iterations = double(state.iterations());
  const double conv_rate = double(p.flops(pass)) * 1e-9 * iterations / conv_s;
  const double sgemm_rate =
      2.0 * double(kPeakSize) * kPeakSize * kPeakSize * 1e-9 * iterations / sgemm_s;
  state.counters["conv_GFLOP/s"] = conv_rate;
  state.counters["sgemm_GFLOP/s"] = sgemm_rate;
  state.counters["share_of_sgemm"] = conv_rate / sgemm_rate;
  // The SGEMM rate is OpenBLAS's on the core it chose for this CPU, which may be far below
  // the CPU's own (an old core on a CPU newer than the build).
  state.SetLabel(plan->notes() + ", sgemm " + im2col::gemm_backend_runtime(backend));
}

double minimum(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// Every benchmark here: milliseconds of wall time (the plans run threads), with the minimum
// over repetitions beside Google Benchmark's mean and median.
template <class... Args>
void add_benchmark(const std::string& name, Args&&... args) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<Args>(args)...)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->ComputeStatistics("min", minimum);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const Pass passes[] = {Pass::forward, Pass::backward_data, Pass::backward_filter};
  for (const Layer& layer : kLayers) {
    const ConvProblem p = problem_of(layer);
    for (bool to_columns : {true, false}) {
      const std::string name =
          std::string("loops/") + (to_columns ? "im2col/" : "col2im/") + layer.name;
      benchmark::RegisterBenchmark(name.c_str(), bench_loops, p, to_columns)
          ->Unit(benchmark::kMillisecond)
          ->ComputeStatistics("min", minimum);
    }
    for (Pass pass : passes) {
      for (const char* name : {"cpu.onednn", "cpu.im2col"}) {
        const convlab::Algorithm* algo = nullptr;
        try {
          algo = &convlab::registry().get(name);
        } catch (const convlab::Error&) {
          continue;  // not built here
        }
        const std::string label =
            std::string("conv/") + name + "/" + convlab::to_string(pass) + "/" + layer.name;
        add_benchmark(label, bench_registered, algo, p, pass);
      }
      for (const char* name : {"cpu.im2col", "cpu.winograd"}) {
        if (!im2col::gemm_backend_available(im2col::GemmBackend::openblas)) break;
        const convlab::Algorithm* algo = &convlab::registry().get(name);
        if (!algo->supports(p, pass)) continue;
        const std::string label =
            std::string("share/") + name + "/" + convlab::to_string(pass) + "/" + layer.name;
        add_benchmark(label, bench_share, algo, p, pass);
      }
      for (const auto& entry : im2col::kGemmBackendNames) {
        const im2col::GemmBackend backend = entry.value;
        if (!im2col::gemm_backend_available(backend)) continue;
        const std::string strategy = std::string("strategy/") + im2col::to_string(backend) + "/" +
                                     convlab::to_string(pass) + "/" + layer.name;
        add_benchmark(strategy, bench_backend, p, pass, backend);
        const std::string name = std::string("gemm/") + im2col::to_string(backend) + "/" +
                                 convlab::to_string(pass) + "/" + layer.name;
        add_benchmark(name, bench_gemm, backend, p, pass);
      }
      for (int64_t images : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{4}, int64_t{8}}) {
        for (im2col::ParallelMode mode :
             {im2col::ParallelMode::images, im2col::ParallelMode::gemm}) {
          const std::string name = std::string("im2col/") + convlab::to_string(pass) + "/" +
                                   layer.name + "/b" +
                                   (images ? std::to_string(images) : std::string("auto")) + "/" +
                                   im2col::to_string(mode);
          add_benchmark(name, bench_strategy, p, pass, images, mode);
        }
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
