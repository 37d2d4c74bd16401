// The declared workspace is the whole memory contract of a GPU plan: for every GPU
// algorithm and pass over a set of layers, (1) the counting device allocator holds exactly
// the tensors plus workspace_bytes() while the case is set up, and nothing more is
// allocated through it during run(); (2) cudaMemGetInfo before and after a warmed-up run
// agrees within the driver's granularity, so no library allocated behind our back; (3) a
// workspace one byte short is refused; (4) cuda.im2col's workspace is its documented
// formula; (5) no run writes outside its buffers: x, w, y and the workspace each sit between
// guard bands (guard_bands.hpp), checked after every run. Skipped without a usable device. Run it alone (not beside other GPU processes):
// cudaMemGetInfo sees the whole device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "cuda/common/device.hpp"
#include "cuda/common/settings.hpp"
#include "cuda/im2col/cuda_im2col.hpp"
#include "gpu/guard_bands.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

// cudaMemGetInfo reports in the driver's allocation granularity (2 MiB pages).
constexpr std::size_t kGranularity = std::size_t(2) << 20;

ConvProblem layer(int64_t n, int64_t c, int64_t h, int64_t k, int64_t r, int64_t pad,
                  int64_t stride) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = p.w = h, p.k = k, p.r = p.s = r;
  p.pad_h = p.pad_w = pad, p.stride_h = p.stride_w = stride;
  return p;
}

std::vector<ConvProblem> problems() {
  std::vector<ConvProblem> list = {
      layer(4, 64, 56, 64, 3, 1, 1),    // ResNet-50 3x3
      layer(4, 256, 56, 64, 1, 0, 1),   // ResNet-50 1x1 (the im2col shortcut)
      layer(4, 3, 128, 96, 11, 0, 1),   // convnet-benchmarks L1
      layer(4, 512, 7, 512, 3, 1, 1),   // a late layer: many images per column buffer
      layer(4, 128, 28, 256, 3, 1, 2),  // strided
  };
  const auto edges = testing::edge_cases();
  list.insert(list.end(), edges.begin(), edges.begin() + 12);
  return list;
}

void check_workspace(const Algorithm& algorithm, const ConvProblem& p, Pass pass) {
  const std::string where = algorithm.name() + " " + to_string(pass) + " " + p.descriptor();
  if (!algorithm.supports(p, pass)) return;
  auto plan = algorithm.plan(p, pass);
  const std::size_t ws = plan->workspace_bytes();
  cuda::CudaContext& context = cuda::device_context(cuda::default_device_index());
  ASSERT_EQ(&algorithm.context(), &context) << where;
  const HostTensors host = make_inputs(p, pass, testing::run_seed());
  const std::size_t before = context.current_bytes();
  testing::GuardedCase buffers(context, host, ws);
  const std::size_t tensors = static_cast<std::size_t>(p.x_bytes() + p.w_bytes() + p.y_bytes()) +
                              testing::GuardedCase::overhead_bytes();
  EXPECT_EQ(context.current_bytes() - before, tensors + ws) << where;
  plan->run(buffers.tensors(), buffers.workspace());  // warm-up: lazy module loading
  context.synchronize();
  EXPECT_EQ(buffers.check(), "") << where << ": run() wrote outside its buffers";
  context.reset_peak();
  const cuda::MemInfo free_before = context.mem_info();
  plan->run(buffers.tensors(), buffers.workspace());
  context.synchronize();
  const cuda::MemInfo free_after = context.mem_info();
  EXPECT_EQ(buffers.check(), "") << where << ": the second run() wrote outside its buffers";
  EXPECT_EQ(context.peak_bytes(), context.current_bytes()) << where << ": run() allocated";
  EXPECT_EQ(context.peak_bytes() - before, tensors + ws) << where;
  const std::size_t drift = free_before.free > free_after.free ? free_before.free - free_after.free
                                                               : free_after.free - free_before.free;
  EXPECT_LE(drift, kGranularity) << where << ": device free memory moved by " << drift
                                 << " bytes across run() (" << plan->info().describe() << ")";
  if (ws > 0) {
    Workspace short_ws = buffers.workspace();
    short_ws.bytes = ws - 1;
    try {
      plan->run(buffers.tensors(), short_ws);
      ADD_FAILURE() << where << ": a workspace one byte short was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << where << ": " << e.what();
    }
  }
}

TEST(GpuWorkspace, DeclaredIsMeasured) {
  const Support device = cuda::device_support(cuda::default_device_index());
  if (!device) GTEST_SKIP() << "no usable CUDA device: " << device.reason;
  int checked = 0;
  for (const Algorithm* a : registry().all()) {
    if (a->device() != Device::gpu || !a->available()) continue;
    for (const ConvProblem& p : problems()) {
      for (Pass pass : testing::all_passes()) {
        check_workspace(*a, p, pass);
        ++checked;
      }
    }
  }
  std::cout << checked << " (algorithm, layer, pass) combinations measured\n";
  EXPECT_GT(checked, 0);
}

TEST(GpuWorkspace, Im2colIsItsFormula) {
  const Support device = cuda::device_support(cuda::default_device_index());
  if (!device) GTEST_SKIP() << "no usable CUDA device: " << device.reason;
  const Algorithm& a = registry().get("cuda.im2col");
  const int cc = cuda::device_context(cuda::default_device_index()).info().cc_major;
  for (const ConvProblem& p : problems()) {
    for (Pass pass : testing::all_passes()) {
      const auto plan = a.plan(p, pass);
      const KnobValues& knobs = plan->info().knobs;
      const auto layout =
          cuda::cuda_im2col_layout(p, pass, knob_integer(knobs, "images").value_or(0),
                                   cuda::cublas_workspace_bytes(cuda::gpu_settings(knobs), cc));
      EXPECT_EQ(plan->workspace_bytes(), layout.workspace_bytes)
          << p.descriptor() << " " << to_string(pass);
    }
  }
}

}  // namespace
}  // namespace convlab
