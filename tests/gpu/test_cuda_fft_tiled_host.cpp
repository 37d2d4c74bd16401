// cuda.fft_tiled on the host: the sequence its GPU plan runs (strategy/tiled_fft_passes.hpp)
// driven by host implementations of its steps, each the kernels' own per-element function
// (tiled_kernels.hpp: the gathers, the copy-out, overlap-add as a gather, the dw sum) around
// cpu.fft's plan of the same sub-problem, compared with the reference under the tiling's
// bound over the corpus with forced tiles and batches. What this cannot check: the launches,
// cuFFT/cuBLAS (cuda.fft's plan) and device memory; test_gpu_algorithms runs cuda.fft_tiled
// over the corpus where a GPU is present. Also: how it describes itself, and that it says why
// when no device is usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cuda/fft_tiled/tiled_kernels.hpp"
#include "strategy/tiled_fft_passes.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::problem;
using testing::run_seed;

// A 64-byte-aligned float buffer (FFTW's plans were made for that alignment).
struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t bytes)
      : data(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64))) {
    std::memset(data, 0xFF, (bytes + 63) / 64 * 64 + 64);  // NaN pattern: unwritten reads show
  }
  ~AlignedBuffer() { std::free(data); }
  char* data;
};

// The steps of strategy/tiled_fft_passes.hpp on the host, element by element as the kernels
// do them.
struct HostOps {
  const ConvProblem& p;
  const TiledFftGeometry& g;
  Pass pass;
  char* base;
  Plan* full;
  Plan* last;
  float* patches() const { return reinterpret_cast<float*>(base + g.patches.offset); }
  float* tiles() const { return reinterpret_cast<float*>(base + g.tiles_buffer.offset); }
  float* partial() const { return reinterpret_cast<float*>(base + g.partial.offset); }
  void gather_patches(TiledBatch b, const float* x) {
    for (int64_t e = 0; e < b.count * p.c * g.h.patch * g.w.patch; ++e)
      patches()[e] = cuda::tiled_patch_value(g, b, p.c, p.h, p.w, x, e);
  }
  void gather_tiles(TiledBatch b, const float* dy) {
    for (int64_t e = 0; e < b.count * p.k * g.h.tile * g.w.tile; ++e)
      tiles()[e] = cuda::tiled_tile_value(g, b, p.k, p.out_h(), p.out_w(), dy, e);
  }
  void scatter_tiles(TiledBatch b, float* y) {
    for (int64_t e = 0; e < b.count * p.k * g.h.tile * g.w.tile; ++e) {
      const int64_t i = cuda::tiled_y_index(g, b, p.k, p.out_h(), p.out_w(), e);
      if (i >= 0) y[i] = tiles()[e];
    }
  }
  void add_patches(TiledBatch b, float* dx) {
    float* first = dx + cuda::tiled_first_image(g, b) * p.c * p.h * p.w;
    for (int64_t e = 0; e < cuda::tiled_images(g, b) * p.c * p.h * p.w; ++e)
      first[e] += cuda::tiled_dx_sum(g, b, p.c, p.h, p.w, patches(), e);
  }
  void zero(float* dx) { std::memset(dx, 0, static_cast<std::size_t>(p.x_bytes())); }
  void run_fft(TiledBatch b, float* w) {
    Tensors sub;
    sub.x = patches();
    sub.y = tiles();
    sub.w = w;
    Plan& fft = b.count == g.batch ? *full : *last;
    fft.run(sub, Workspace{base + g.fft.offset, static_cast<std::size_t>(g.fft.bytes)});
  }
  void accumulate(float* dw) {
    for (int64_t e = 0; e < p.k * p.c_per_group() * p.r * p.s; ++e) dw[e] += partial()[e];
  }
};

// Runs cuda.fft_tiled's sequence on the host with `options`; returns the comparison.
AccuracyReport emulate(const ConvProblem& p, Pass pass, const TiledFftOptions& options,
                       uint64_t seed) {
  TiledFftGeometry g = tiled_fft_geometry(p, pass, options);
  const Algorithm& fft = registry().get("cpu.fft");
  auto full = fft.plan(tiled_fft_subproblem(p, g, g.batch), pass);
  auto last =
      g.last_batch != g.batch ? fft.plan(tiled_fft_subproblem(p, g, g.last_batch), pass) : nullptr;
  std::size_t bytes = full->workspace_bytes();
  if (last && last->workspace_bytes() > bytes) bytes = last->workspace_bytes();
  tiled_fft_set_fft_bytes(g, static_cast<int64_t>(bytes));
  AlignedBuffer workspace(static_cast<std::size_t>(g.total_bytes));
  HostTensors host = make_inputs(p, pass, seed);
  const HostTensors inputs = host;
  Tensors t{host.x.data(), host.w.data(), host.y.data()};
  HostOps ops{p, g, pass, workspace.data, full.get(), last ? last.get() : full.get()};
  run_tiled_fft_pass(g, pass, t, ops);
  return compare_with_reference(p, pass, inputs, host.output(pass), tiled_fft_error_bound(g, 4.0));
}

class CudaFftTiledHost : public ::testing::Test {
 protected:
  void SetUp() override {
    set_num_threads(2);
    if (!std::getenv("CONVLAB_FFTW_PLANNER")) {
      setenv("CONVLAB_FFTW_PLANNER", "estimate", 1);
      unset_ = true;
    }
  }
  void TearDown() override {
    if (unset_) unsetenv("CONVLAB_FFTW_PLANNER");
  }
  bool unset_ = false;
};

TEST_F(CudaFftTiledHost, TheGpuSequenceMatchesTheReference) {
  const uint64_t seed = run_seed();
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::random_problems(seed ^ 0xc0da, 40)) problems.push_back(p);
  int checked = 0;
  double worst = 0;
  for (const ConvProblem& p : problems) {
    for (Pass pass : all_passes()) {
      std::vector<TiledFftOptions> variants(2);  // the default, and small tiles in small batches
      variants[1].tile = 3;
      variants[1].batch = 2;
      for (const TiledFftOptions& o : variants) {
        const AccuracyReport r = emulate(p, pass, o, seed + checked);
        EXPECT_TRUE(r.within_bound)
            << p.descriptor() << " " << to_string(pass) << " tile " << o.tile << " batch "
            << o.batch << " seed " << seed << ": " << r.detail;
        EXPECT_EQ(r.nonfinite, 0) << p.descriptor() << " " << to_string(pass);
        worst = r.worst_ratio > worst ? r.worst_ratio : worst;
        ++checked;
      }
    }
  }
  std::cout << "cuda.fft_tiled on the host: " << checked << " cases, worst error/bound " << worst
            << " (seed " << seed << ")\n";
}

TEST(CudaFftTiledDescribes, AsTheCpuTwinDoes) {
  const AlgorithmInfo& gpu = registry().get("cuda.fft_tiled").info();
  const AlgorithmInfo& cpu = registry().get("cpu.fft_tiled").info();
  EXPECT_EQ(gpu.family, Family::fft_tiled);
  EXPECT_EQ(gpu.device, Device::gpu);
  // The tiling's knobs, beside each backend's own (GPU settings, FFTW planner).
  for (const char* name : {"tile", "batch"}) {
    const KnobSpec* g = nullptr;
    const KnobSpec* c = nullptr;
    for (const KnobSpec& k : gpu.knobs) g = k.name == name ? &k : g;
    for (const KnobSpec& k : cpu.knobs) c = k.name == name ? &k : c;
    ASSERT_TRUE(g && c) << name;
    EXPECT_EQ(g->default_value, c->default_value) << name;
    EXPECT_EQ(g->min, c->min) << name;
  }
  // The same tiling, hence the same bound, in fp32.
  const ConvProblem p = problem("mb2ic3ih40oc4kh5ph2");
  if (gpu.math_mode == MathMode::fp32) {
    for (Pass pass : all_passes()) {
      EXPECT_EQ(registry().get("cuda.fft_tiled").error_bound(p, pass).factor,
                registry().get("cpu.fft_tiled").error_bound(p, pass).factor);
    }
  }
}

TEST(CudaFftTiledDescribes, SaysWhyWithoutADevice) {
  const Algorithm& algo = registry().get("cuda.fft_tiled");
  if (algo.available()) GTEST_SKIP() << "a device is usable here: nothing to refuse";
  const Support s = algo.supports(problem("mb2ic3ih9oc4kh3"), Pass::forward);
  EXPECT_FALSE(s.ok);
  EXPECT_FALSE(s.reason.empty());
  try {
    algo.plan(problem("mb2ic3ih9oc4kh3"), Pass::forward);
    FAIL() << "planned without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unavailable) << e.what();
  }
}

}  // namespace
}  // namespace convlab
