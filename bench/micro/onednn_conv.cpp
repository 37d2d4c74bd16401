// Google Benchmark of cpu.onednn on the layers cpu.fft is compared against, all three passes.
// Each cpu.onednn/... benchmark plans once, then times Plan::run (reorders included, as
// convbench does); the counter primitive_ms is the convolution primitive alone, from the
// plan's last_run_phases(), and reorders_ms the rest of run(). Threads follow CONVLAB_NUM_THREADS
// (default: all cores).
//
// The dnnl_fwd/... benchmarks are the evidence that cpu.onednn's configuration is oneDNN's
// fastest for NCHW user tensors: the forward primitive alone (no reorders) under
// forward_training or forward_inference, convolution_auto or convolution_direct, with
// format_tag::any or the plain user layouts (nchw/oihw, which need no reorder).
//
//   CONVLAB_NUM_THREADS=2 build/bench/micro/onednn_conv --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <dnnl.hpp>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/micro/plan_timing.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "lib/cpu/onednn/onednn_plan.hpp"

namespace {

void run_case(benchmark::State& state, const std::string& descriptor, convlab::Pass pass) {
  micro::time_plan(state, convlab::registry().get("cpu.onednn"),
                   convlab::parse_descriptor(descriptor).problem, pass);
}

// One forward configuration of oneDNN, the primitive alone on memory in its own layouts.
struct Config {
  const char* name;
  dnnl::prop_kind prop;
  dnnl::algorithm algorithm;
  bool any;  // format_tag::any, else the user's nchw / oihw
};

void run_primitive(benchmark::State& state, const std::string& descriptor, Config config) {
  using dnnl::memory;
  const convlab::ConvProblem p = convlab::parse_descriptor(descriptor).problem;
  if (p.groups != 1) {
    state.SkipWithError("dnnl_fwd covers groups = 1 only");
    return;
  }
  convlab::onednn::ThreadScope threads(convlab::num_threads());
  const dnnl::engine& engine = convlab::onednn::cpu_engine();
  dnnl::stream stream(engine);
  const auto act = config.any ? memory::format_tag::any : memory::format_tag::nchw;
  const auto wei = config.any ? memory::format_tag::any : memory::format_tag::oihw;
  const memory::desc x({p.n, p.c, p.h, p.w}, memory::data_type::f32, act);
  const memory::desc w({p.k, p.c, p.r, p.s}, memory::data_type::f32, wei);
  const memory::desc y({p.n, p.k, p.out_h(), p.out_w()}, memory::data_type::f32, act);
  const dnnl::convolution_forward::primitive_desc pd({config.prop,
                                                      config.algorithm,
                                                      x,
                                                      w,
                                                      y,
                                                      {p.stride_h, p.stride_w},
                                                      {p.dilation_h - 1, p.dilation_w - 1},
                                                      {p.pad_h, p.pad_w},
                                                      {p.end_pad_h(), p.end_pad_w()}},
                                                     engine);
  memory src(pd.src_desc(), engine), weights(pd.weights_desc(), engine), dst(pd.dst_desc(), engine);
  dnnl::convolution_forward conv(pd);
  const std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  conv.execute(stream, args);
  stream.wait();
  for (auto _ : state) {
    conv.execute(stream, args);
    stream.wait();
  }
  state.SetLabel(pd.impl_info_str());
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
  const Config configs[] = {
      {"training-auto-any (cpu.onednn)", dnnl::prop_kind::forward_training,
       dnnl::algorithm::convolution_auto, true},
      {"training-direct-any", dnnl::prop_kind::forward_training,
       dnnl::algorithm::convolution_direct, true},
      {"inference-auto-any", dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_auto,
       true},
      {"training-auto-nchw", dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_auto,
       false},
  };
  for (const std::string& layer : kLayers) {
    for (const Config& config : configs) {
      benchmark::RegisterBenchmark(("dnnl_fwd/" + layer + "/" + config.name).c_str(), run_primitive,
                                   layer, config)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
