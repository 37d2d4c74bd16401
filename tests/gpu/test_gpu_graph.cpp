// Plan::run on a caller's stream, captured into a CUDA graph: for every GPU algorithm, one
// pass of each kind it supports is run once on the test's own stream (warm-up), captured with
// cudaStreamBeginCapture in global mode (where the runtime refuses allocation and
// synchronisation, so a run that does either fails the capture), instantiated, and replayed
// twice: on the inputs it was captured with and on fresh inputs uploaded into the same
// buffers (a graph that baked in values instead of reading its buffers fails there). Each
// replay is compared with the reference. Nothing may run while capturing: the output is
// still the NaN poison after the capture, so a run that ignores the caller's stream fails.
// Skipped, with the reason, without a usable device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const Algorithm* a : registry().all()) {
    if (a->device() == Device::gpu) names.push_back(a->name());
  }
  return names;
}

std::string cuda_words(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

// The test's stream, graph and executable graph, released in any case.
struct Captured {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Captured() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (stream) cudaStreamDestroy(stream);
  }
};

void upload(DeviceContext& context, const Tensors& t, const HostTensors& host) {
  context.copy_to_device(t.x, host.x.data(), host.x.size() * sizeof(float));
  context.copy_to_device(t.w, host.w.data(), host.w.size() * sizeof(float));
  context.copy_to_device(t.y, host.y.data(), host.y.size() * sizeof(float));
}

// "" when the replay's output is the reference's within the algorithm's bound.
std::string compare(const Algorithm& a, const ConvProblem& p, Pass pass, const HostTensors& host,
                    const std::vector<float>& out) {
  const AccuracyReport r = compare_with_reference(p, pass, host, out, a.error_bound(p, pass));
  if (r.within_bound && r.nonfinite == 0) return "";
  return "error " + std::to_string(r.worst_ratio) + " x its bound, " + std::to_string(r.nonfinite) +
         " non-finite; " + r.detail;
}

class GpuGraph : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuGraph, OnePassCapturedAndReplayed) {
  const Algorithm& a = registry().get(GetParam());
  const Support available = a.available();
  if (!available) GTEST_SKIP() << GetParam() << " not available here: " << available.reason;
  const ConvProblem p = testing::problem("mb2ic8ih13oc12kh3ph1");
  const uint64_t seed = testing::run_seed();
  int captured = 0;
  for (Pass pass : testing::all_passes()) {
    if (!a.supports(p, pass)) continue;
    const std::string where = GetParam() + " " + to_string(pass) + " " + p.descriptor() +
                              " (seed " + std::to_string(seed) + ")";
    auto plan = a.plan(p, pass);
    const HostTensors host = make_inputs(p, pass, seed);
    CaseBuffers buffers(a.context(), p, host, plan->workspace_bytes());
    Captured c;
    ASSERT_EQ(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), cudaSuccess) << where;
    const Stream stream{c.stream};
    // Warm-up outside the capture: lazy module loading and the libraries' first-call set-up
    // are not part of a pass.
    plan->run(buffers.tensors(), buffers.workspace(), stream);
    ASSERT_EQ(cudaStreamSynchronize(c.stream), cudaSuccess) << where;
    buffers.reset_output(pass, host);

    ASSERT_EQ(cudaStreamBeginCapture(c.stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    std::string thrown;
    try {
      plan->run(buffers.tensors(), buffers.workspace(), stream);
    } catch (const Error& e) {
      thrown = e.what();
    }
    const cudaError_t ended = cudaStreamEndCapture(c.stream, &c.graph);
    ASSERT_EQ(thrown, "") << where << ": run() failed while capturing";
    ASSERT_EQ(ended, cudaSuccess) << where
                                  << ": the capture was invalidated: " << cuda_words(ended);
    std::size_t nodes = 0;
    ASSERT_EQ(cudaGraphGetNodes(c.graph, nullptr, &nodes), cudaSuccess);
    EXPECT_GT(nodes, 0u) << where << ": nothing was captured (run() ignored the stream?)";
    const std::vector<float> untouched = buffers.download_output(pass);
    int64_t written = 0;
    for (float v : untouched) written += std::isnan(v) ? 0 : 1;
    EXPECT_EQ(written, 0) << where << ": " << written
                          << " output elements were written while capturing";

    const cudaError_t made = cudaGraphInstantiate(&c.exec, c.graph, 0);
    ASSERT_EQ(made, cudaSuccess) << where << ": " << cuda_words(made);
    ASSERT_EQ(cudaGraphLaunch(c.exec, c.stream), cudaSuccess) << where;
    ASSERT_EQ(cudaStreamSynchronize(c.stream), cudaSuccess) << where;
    EXPECT_EQ(compare(a, p, pass, host, buffers.download_output(pass)), "")
        << where << ": first replay";

    const HostTensors fresh = make_inputs(p, pass, seed + 1);  // output role poisoned again
    upload(a.context(), buffers.tensors(), fresh);
    ASSERT_EQ(cudaGraphLaunch(c.exec, c.stream), cudaSuccess) << where;
    ASSERT_EQ(cudaStreamSynchronize(c.stream), cudaSuccess) << where;
    EXPECT_EQ(compare(a, p, pass, fresh, buffers.download_output(pass)), "")
        << where << ": replay on fresh inputs";
    ++captured;
  }
  if (captured == 0) GTEST_SKIP() << GetParam() << " supports no pass of " << p.descriptor();
}

// cuda.fft with its own graph (knob graph=on): the first run captures the pass, later runs
// on the same pointers replay it (fresh values in the same buffers included), a run on other
// buffers captures again and updates it, and a run inside the caller's capture goes into the
// caller's graph. Each run's output against the reference.
TEST(CudaFftGraph, CapturedReplayedUpdatedAndNested) {
  const Algorithm& a = registry().get("cuda.fft");
  if (!a.available()) GTEST_SKIP() << "cuda.fft not available here: " << a.available().reason;
  const ConvProblem p = testing::problem("mb2ic8ih13oc12kh3ph1");
  const uint64_t seed = testing::run_seed() + 5;
  for (Pass pass : testing::all_passes()) {
    const std::string where = std::string(to_string(pass)) + " " + p.descriptor();
    auto plan = a.plan(p, pass, {{"graph", "true"}});
    Captured c;
    ASSERT_EQ(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), cudaSuccess);
    const Stream stream{c.stream};
    const HostTensors host = make_inputs(p, pass, seed);
    CaseBuffers buffers(a.context(), p, host, plan->workspace_bytes());
    auto run_and_compare = [&](CaseBuffers& b, const HostTensors& h, const char* step) {
      plan->run(b.tensors(), b.workspace(), stream);
      ASSERT_EQ(cudaStreamSynchronize(c.stream), cudaSuccess) << where << " " << step;
      EXPECT_EQ(compare(a, p, pass, h, b.download_output(pass)), "") << where << ": " << step;
    };
    run_and_compare(buffers, host, "capture");
    buffers.reset_output(pass, host);
    run_and_compare(buffers, host, "replay");
    const HostTensors fresh = make_inputs(p, pass, seed + 1);
    upload(a.context(), buffers.tensors(), fresh);
    run_and_compare(buffers, fresh, "replay on fresh values");
    CaseBuffers other(a.context(), p, host, plan->workspace_bytes());
    run_and_compare(other, host, "update for other buffers");

    other.reset_output(pass, host);
    ASSERT_EQ(cudaStreamBeginCapture(c.stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    std::string thrown;
    try {
      plan->run(other.tensors(), other.workspace(), stream);
    } catch (const Error& e) {
      thrown = e.what();
    }
    const cudaError_t ended = cudaStreamEndCapture(c.stream, &c.graph);
    ASSERT_EQ(thrown, "") << where << ": run() failed inside the caller's capture";
    ASSERT_EQ(ended, cudaSuccess) << where << ": " << cuda_words(ended);
    ASSERT_EQ(cudaGraphInstantiate(&c.exec, c.graph, 0), cudaSuccess) << where;
    ASSERT_EQ(cudaGraphLaunch(c.exec, c.stream), cudaSuccess) << where;
    ASSERT_EQ(cudaStreamSynchronize(c.stream), cudaSuccess) << where;
    EXPECT_EQ(compare(a, p, pass, host, other.download_output(pass)), "")
        << where << ": inside the caller's graph";
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuGraph, ::testing::ValuesIn(gpu_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == '.') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace convlab
