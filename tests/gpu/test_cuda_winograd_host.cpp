// cuda.winograd on the host: the sequence its GPU plan runs (cuda/winograd/winograd_passes.hpp)
// driven by host implementations of its steps, each the kernels' own per-thread function
// (winograd_kernels.hpp: filter, input, output and gradient transforms, the filter adjoint)
// around a column-major GEMM loop with cuBLAS's contract, compared with the reference under
// the GPU plan's bound, both variants, forced and automatic chunks, in a NaN-poisoned
// workspace of the plan's layout. Also: the GPU layout is the shared formula (hand values),
// how it describes itself beside cpu.winograd, and what it refuses, with the reason, with or
// without a device. What this cannot check: the launches, cuBLAS and device memory;
// test_gpu_algorithms runs cuda.winograd over the corpus where a GPU is present.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cuda/winograd/cuda_winograd.hpp"
#include "cuda/winograd/winograd_kernels.hpp"
#include "cuda/winograd/winograd_passes.hpp"
#include "host_sgemm.hpp"
#include "strategy/winograd_host.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::problem;
using testing::run_seed;
using winograd::WinogradLayout;

constexpr std::size_t kCublasBytes = std::size_t{32} << 20;  // sm_90's default pool
// The emulation's: not a multiple of 256, so the buffers after it are placed by rounding.
constexpr std::size_t kEmulatedCublasBytes = 1000;

// The steps of winograd_passes.hpp on the host, thread by thread as the kernels run them.
template <int M>
struct HostOps {
  const WinogradLayout& l;
  void filter(int64_t g, bool flip, const float* w, float* u) {
    for (int64_t row = 0; row < l.dst_channels * l.src_channels; ++row)
      cuda::winograd_filter_row<M>(l, flip, g, w, row, u);
  }
  void input(int64_t g, const float* src, int64_t t0, int64_t count, float* v) {
    for (int64_t job = 0; job < l.src_channels * count; ++job)
      cuda::winograd_input_tile<M>(l, g, src, t0, count, job, v);
  }
  void output(int64_t g, const float* prod, int64_t t0, int64_t count, float* dst) {
    for (int64_t job = 0; job < l.dst_channels * count; ++job)
      cuda::winograd_output_tile<M>(l, g, prod, t0, count, job, dst);
  }
  void gradient(int64_t g, const float* dy, int64_t t0, int64_t count, float* prod) {
    for (int64_t job = 0; job < l.dst_channels * count; ++job)
      cuda::winograd_gradient_tile<M>(l, g, dy, t0, count, job, prod);
  }
  void filter_gradient(int64_t g, const float* du, float* dw) {
    for (int64_t kc = 0; kc < l.dst_channels * l.src_channels; ++kc)
      cuda::winograd_filter_gradient<M>(l, g, du, kc, dw);
  }
  void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
            int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
            int64_t ldc, int64_t stride_c, int64_t batch) {
    testing::host_sgemm_strided_batched(op_a, op_b, m, n, k, a, lda, stride_a, b, ldb, stride_b,
                                        beta, c, ldc, stride_c, batch);
  }
};

// Runs cuda.winograd's sequence on the host on `inputs` (output poisoned) in the layout of
// `options`; returns the output.
std::vector<float> emulate(const ConvProblem& p, Pass pass,
                           const winograd::WinogradOptions& options, HostTensors host) {
  const int m = options.m;
  const WinogradLayout l = winograd::winograd_layout(p, pass, options);
  std::vector<float> workspace(l.workspace_bytes / 4 + 1, std::numeric_limits<float>::quiet_NaN());
  std::vector<float>& out = host.output(pass);
  std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
  const Tensors t{host.x.data(), host.w.data(), host.y.data()};
  const cuda::WinogradBuffers buffers = cuda::winograd_buffers(l, workspace.data());
  if (m == 2) {
    HostOps<2> ops{l};
    cuda::run_winograd_pass(l, pass, p.groups, t, buffers, ops);
  } else {
    HostOps<4> ops{l};
    cuda::run_winograd_pass(l, pass, p.groups, t, buffers, ops);
  }
  return out;
}

// As a plan with variant m and `chunk` tiles per chunk (0 = auto) would.
std::vector<float> emulate(const ConvProblem& p, Pass pass, int m, int64_t chunk,
                           HostTensors host) {
  return emulate(p, pass, cuda::cuda_winograd_options(m, chunk, kEmulatedCublasBytes),
                 std::move(host));
}

// Winograd-shaped problems: edge cases and random problems forced to stride-1 dense 3x3, and
// shapes where tiles hang over the edge, backward-data patches start inside dy (pad 3), the
// end padding differs, and groups split the GEMMs.
std::vector<ConvProblem> winograd_corpus(uint64_t seed) {
  std::vector<ConvProblem> list;
  for (const char* d : {"mb1ic1ih3oc1kh3ph0", "mb2ic3ih7oc5kh3ph1", "mb1ic2ih9iw11oc3kh3kw3ph2",
                        "mb1ic1ih4oc1kh3ph3", "g2mb2ic4ih10oc6kh3ph1", "mb1ic5ih2iw3oc3kh3kw3ph1",
                        "mb1ic3ih8oc2kh3oh7ph1", "mb3ic4ih13iw6oc2kh3kw3ph0pw1"}) {
    list.push_back(problem(d));
  }
  for (const ConvProblem& p : testing::edge_cases()) {
    if (winograd::winograd_shape_support("cuda.winograd", p)) list.push_back(p);
  }
  for (ConvProblem p : testing::random_problems(seed, 40)) {
    p.r = p.s = 3, p.stride_h = p.stride_w = 1, p.dilation_h = p.dilation_w = 1;
    p.pad_h = std::min<int64_t>(p.pad_h, 3), p.pad_w = std::min<int64_t>(p.pad_w, 3);
    p.pad_h_end.reset(), p.pad_w_end.reset();
    p.n = std::min<int64_t>(p.n, 3);
    if (p.h + 2 * p.pad_h >= 3 && p.w + 2 * p.pad_w >= 3) list.push_back(p);
  }
  return list;
}

TEST(CudaWinogradHost, TheGpuSequenceMatchesTheReference) {
  const uint64_t seed = run_seed();
  int checked = 0;
  double worst = 0;
  for (const ConvProblem& p : winograd_corpus(seed ^ 0x3a3)) {
    for (Pass pass : all_passes()) {
      for (int m : {2, 4}) {
        for (int64_t chunk : {int64_t{0}, int64_t{5}}) {  // auto (one chunk here), and many
          const HostTensors inputs = make_inputs(p, pass, seed + checked);
          const std::vector<float> out = emulate(p, pass, m, chunk, inputs);
          const AccuracyReport r = compare_with_reference(
              p, pass, inputs, out, cuda::cuda_winograd_error_bound(p, pass, m, false));
          EXPECT_TRUE(r.within_bound && r.nonfinite == 0)
              << p.descriptor() << " " << to_string(pass) << " F(" << m << ",3) chunk " << chunk
              << " seed " << seed << ": " << r.detail;
          worst = r.worst_ratio > worst ? r.worst_ratio : worst;
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 300);
  std::cout << "cuda.winograd on the host: " << checked << " cases, worst error/bound " << worst
            << " (seed " << seed << ")\n";
}

// The kernels and GEMMs index U, V and M by the layout's point strides, not by the matrices'
// sizes: the sequence on cpu.winograd's layout (a cache line of skew after every point's
// matrix, 64-byte alignment), whose gaps are NaN, still matches the reference.
TEST(CudaWinogradHost, TheSequenceRunsOnTheCpuLayout) {
  const uint64_t seed = run_seed() + 2;
  winograd::WinogradOptions cpu_like;
  cpu_like.chunk = 5;
  cpu_like.point_skew_floats = winograd::kWinogradCpuPointSkew;
  for (int m : {2, 4}) {
    cpu_like.m = m;
    for (const char* d : {"mb2ic3ih7oc5kh3ph1", "g2mb2ic4ih10oc6kh3ph1", "mb1ic1ih4oc1kh3ph3"}) {
      for (Pass pass : all_passes()) {
        const ConvProblem p = problem(d);
        const WinogradLayout l = winograd::winograd_layout(p, pass, cpu_like);
        ASSERT_GT(l.input_point, l.src_channels * l.chunk) << d;
        const HostTensors inputs = make_inputs(p, pass, seed);
        const AccuracyReport r =
            compare_with_reference(p, pass, inputs, emulate(p, pass, cpu_like, inputs),
                                   cuda::cuda_winograd_error_bound(p, pass, m, false));
        EXPECT_TRUE(r.within_bound && r.nonfinite == 0)
            << d << " " << to_string(pass) << " F(" << m << ",3): " << r.detail;
      }
    }
  }
}

// The bound is tight enough to catch a wrong result of a real bug's size.
TEST(CudaWinogradHost, TheBoundCatchesAnInjectedError) {
  const uint64_t seed = run_seed() + 1;
  const ConvProblem p = problem("mb2ic16ih14oc8kh3ph1");
  for (Pass pass : all_passes()) {
    for (int m : {2, 4}) {
      const HostTensors inputs = make_inputs(p, pass, seed);
      const HostTensors broken = testing::with_a_lost_term(p, pass, inputs);
      const AccuracyReport bad =
          compare_with_reference(p, pass, inputs, emulate(p, pass, m, 7, broken),
                                 cuda::cuda_winograd_error_bound(p, pass, m, false));
      EXPECT_FALSE(bad.within_bound) << to_string(pass) << " F(" << m << ",3): " << bad.detail;
    }
  }
}

// The GPU plan's layout, by hand: cuBLAS's workspace first, then U, V and M (or dU, V, P),
// each transform point's matrix (the cuBLAS batch stride) at a 256-byte boundary, no skew, one
// worker, no partials; the auto chunk fills 64 MiB.
TEST(CudaWinogradHost, LayoutIsTheSharedFormula) {
  {
    // 16 x 14 x 14 tiles of F(4,3) in chunks of 100; every buffer a multiple of 64 floats.
    const ConvProblem p = problem("mb16ic64ih56oc64kh3ph1");
    for (Pass pass : all_passes()) {
      const WinogradLayout l =
          winograd::winograd_layout(p, pass, cuda::cuda_winograd_options(4, 100, kCublasBytes));
      EXPECT_EQ(l.workers, 1);
      EXPECT_EQ(l.partials, 0);
      EXPECT_EQ(l.tiles, 16 * 14 * 14);
      EXPECT_EQ(l.chunks, 32);  // ceil(3136 / 100)
      EXPECT_EQ(l.filter_point, 64 * 64);
      EXPECT_EQ(l.input_point, 64 * 100);
      EXPECT_EQ(l.product_point, 64 * 100);
      EXPECT_EQ(l.workspace_bytes, kCublasBytes + 4 * (36 * 64 * 64 + 2 * 36 * 64 * 100));
      // Auto: 64 MiB / (4 * 36 * (64 + 64)) = 3640 tiles, more than one image's 196.
      const WinogradLayout a =
          winograd::winograd_layout(p, pass, cuda::cuda_winograd_options(4, 0, kCublasBytes));
      EXPECT_EQ(a.chunk, 3136);  // capped by the tiles
      ConvProblem big = p;
      big.n = 256;
      EXPECT_EQ(winograd::winograd_layout(big, pass, cuda::cuda_winograd_options(4, 0, 0)).chunk,
                3640);
    }
  }
  {
    // F(2,3), 16 points, 3 x 3 tiles in one chunk, padding visible: a point of U 30*3 = 90 ->
    // 128 floats (16 points: 2048), of V 3*9 = 27 -> 64 (1024), of M 30*9 = 270 -> 320 (5120)
    // (backward-data swaps V and M); cuBLAS 1000 B -> 1024.
    const ConvProblem p = problem("mb1ic3ih5oc30kh3ph1");
    for (Pass pass : all_passes()) {
      const WinogradLayout l =
          winograd::winograd_layout(p, pass, cuda::cuda_winograd_options(2, 0, 1000));
      const bool data = pass == Pass::backward_data;
      EXPECT_EQ(l.chunk, 9);
      EXPECT_EQ(l.filter_point, 128);
      EXPECT_EQ(l.input_point, data ? 320 : 64);
      EXPECT_EQ(l.product_point, data ? 64 : 320);
      EXPECT_EQ(l.filter_offset, 1024);
      EXPECT_EQ(winograd::winograd_input_offset(l, 0), 1024 + 4 * 2048);
      EXPECT_EQ(winograd::winograd_product_offset(l, 0), 1024 + 4 * (2048 + (data ? 5120 : 1024)));
      EXPECT_EQ(l.workspace_bytes, std::size_t{1024 + 4 * (2048 + 1024 + 5120)});
      PlanInfo info;
      winograd::describe_winograd_plan(l, info, "cublas");
      std::size_t split = 0;
      for (const auto& part : info.workspace_split) split += part.second;
      EXPECT_EQ(split, l.workspace_bytes);
      EXPECT_EQ(info.workspace_split.front().first, "cublas");
      EXPECT_EQ(info.transform, "F(2x2,3x3)");
    }
  }
}

TEST(CudaWinogradDescribes, AsTheCpuTwinDoes) {
  const AlgorithmInfo& gpu = registry().get("cuda.winograd").info();
  const AlgorithmInfo& cpu = registry().get("cpu.winograd").info();
  EXPECT_EQ(gpu.family, Family::winograd);
  EXPECT_EQ(gpu.device, Device::gpu);
  EXPECT_TRUE(gpu.deterministic);
  // The shared knobs as the CPU declares them (but for what auto means), beside the GPU's.
  std::map<std::string, KnobSpec> on_gpu, on_cpu;
  for (const KnobSpec& k : gpu.knobs) on_gpu[k.name] = k;
  for (const KnobSpec& k : cpu.knobs) on_cpu[k.name] = k;
  for (const char* name : {"variant", "tiles"}) {
    ASSERT_TRUE(on_gpu.count(name) && on_cpu.count(name)) << name;
    const KnobSpec &g = on_gpu[name], &c = on_cpu[name];
    EXPECT_TRUE(g.type == c.type && g.default_value == c.default_value && g.choices == c.choices &&
                g.min == c.min && g.max == c.max && g.allow_auto == c.allow_auto)
        << name;
  }
  for (const char* name : {"device", "allow_tf32", "cublas_workspace"}) {
    EXPECT_TRUE(on_gpu.count(name)) << name;
  }
  // The same derived bound: equal in fp32 where no per-thread partials enter (one thread).
  const int previous = num_threads();
  set_num_threads(1);
  const ConvProblem p = problem("mb2ic8ih12oc4kh3ph1");
  if (gpu.math_mode == MathMode::fp32) {
    for (Pass pass : all_passes()) {
      EXPECT_EQ(registry().get("cuda.winograd").error_bound(p, pass).factor,
                registry().get("cpu.winograd").error_bound(p, pass).factor)
          << to_string(pass);
    }
  }
  set_num_threads(previous);
  EXPECT_EQ(cuda::cuda_winograd_error_bound(p, Pass::forward, 4, true).factor,
            8192 * cuda::cuda_winograd_error_bound(p, Pass::forward, 4, false).factor);
}

// What Winograd cannot do is refused with the reason, device or not, in cpu.winograd's words.
TEST(CudaWinogradDescribes, RefusesWithReasons) {
  const Algorithm& gpu = registry().get("cuda.winograd");
  const Algorithm& cpu = registry().get("cpu.winograd");
  for (const char* d : {"mb1ic2ih9oc2kh5ph2", "mb1ic2ih9oc2kh3sh2ph1", "mb1ic2ih9oc2kh3ph2dh1",
                        "mb1ic2ih9iw9oc2kh3kw1"}) {
    for (Pass pass : all_passes()) {
      const Support s = gpu.supports(problem(d), pass);
      EXPECT_FALSE(s.ok) << d;
      EXPECT_EQ(s.reason.rfind("cuda.winograd " + problem(d).descriptor() + ": ", 0), 0u)
          << s.reason;
      const std::string cpu_reason = cpu.supports(problem(d), pass).reason;
      EXPECT_EQ(s.reason.substr(s.reason.find(": ")), cpu_reason.substr(cpu_reason.find(": ")));
      EXPECT_THROW(gpu.plan(problem(d), pass), Error);
    }
  }
  ConvProblem invalid = problem("mb1ic3ih5oc8kh3");
  invalid.r = invalid.s = 7;  // larger than the input: invalid, not unsupported
  EXPECT_THROW(gpu.supports(invalid, Pass::forward), Error);
}

TEST(CudaWinogradDescribes, SaysWhyWithoutADevice) {
  const Algorithm& algo = registry().get("cuda.winograd");
  if (algo.available()) GTEST_SKIP() << "a device is usable here: nothing to refuse";
  const Support s = algo.supports(problem("mb2ic3ih9oc4kh3ph1"), Pass::forward);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("CUDA device"), std::string::npos) << s.reason;
  try {
    algo.plan(problem("mb2ic3ih9oc4kh3ph1"), Pass::forward, {{"variant", "f2"}});
    FAIL() << "planned without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unavailable) << e.what();
  }
}

}  // namespace
}  // namespace convlab
