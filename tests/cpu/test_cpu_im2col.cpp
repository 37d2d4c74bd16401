// cpu.im2col against the reference over the corpus, all three passes; bit-exact on integer
// data; deterministic; its settings (images per GEMM, parallel mode, threads) each correct;
// its workspace exactly the documented formula and the only memory run() touches.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "lib/cpu/im2col/cpu_im2col.hpp"
#include "strategy/im2col_tap_classes.hpp"
#include "support/conv_tester.hpp"

// Counts operator new while a run is measured: run() must not allocate. (OpenBLAS and the
// OpenMP runtime allocate their thread buffers with malloc/mmap once per process, outside
// this count; see docs/strategy-im2col.md.)
namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace
void* operator new(std::size_t bytes) {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocations;
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace convlab {
namespace {

using testing::all_passes;
using testing::check_corpus;
using testing::edge_cases;
using testing::random_problems;
using testing::report_corpus;
using testing::run_seed;

const Algorithm& algorithm() { return registry().get("cpu.im2col"); }

// Runs `plan` on `host` with a guard band after its workspace, fails the test where run()
// wrote into it, and returns the pass's output.
std::vector<float> run_within_workspace(Plan& plan, const ConvProblem& p, Pass pass,
                                        const HostTensors& host) {
  const std::size_t ws = plan.workspace_bytes(), guard = 4096;
  CaseBuffers buffers(host_context(), p, host, ws + guard);
  auto* bytes = static_cast<unsigned char*>(buffers.workspace().data);
  std::memset(bytes + ws, 0x5A, guard);
  plan.run(buffers.tensors(), {bytes, ws});
  for (std::size_t i = ws; i < ws + guard; ++i) {
    EXPECT_EQ(bytes[i], 0x5A) << p.descriptor() << " " << to_string(pass)
                              << ": wrote past the workspace at byte " << i;
    if (bytes[i] != 0x5A) break;
  }
  if (ws > 0) EXPECT_THROW(plan.run(buffers.tensors(), {bytes, ws - 1}), Error);
  return buffers.download_output(pass);
}

TEST(CpuIm2col, Registered) {
  const Algorithm& a = algorithm();
  EXPECT_EQ(a.device(), Device::cpu);
  EXPECT_TRUE(a.deterministic());
  EXPECT_FALSE(a.description().empty());
}

TEST(CpuIm2col, EdgeCases) {
  set_num_threads(2);
  const auto summary = check_corpus(algorithm(), edge_cases(), all_passes(), run_seed());
  EXPECT_TRUE(report_corpus("cpu.im2col", "edge cases", summary, run_seed()));
  EXPECT_EQ(summary.unsupported, 0);  // every valid problem is implemented
  EXPECT_GE(summary.passed, 30 * 3);
}

TEST(CpuIm2col, ScaledSuiteLayers) {
  set_num_threads(2);
  const auto layers = testing::scaled_suite_layers();
  std::cout << "cpu.im2col: " << layers.size() << " scaled suite layers from bench/suites"
            << (layers.empty() ? " (none: the suites are empty, nothing checked here)" : "")
            << "\n";
  const auto summary = check_corpus(algorithm(), layers, all_passes(), run_seed() + 1);
  EXPECT_TRUE(report_corpus("cpu.im2col", "scaled suite layers", summary, run_seed() + 1));
  EXPECT_EQ(summary.passed, static_cast<int>(layers.size() * 3));
}

TEST(CpuIm2col, RandomProblems) {
  set_num_threads(2);
  const uint64_t seed = run_seed() + 2;
  const auto summary = check_corpus(algorithm(), random_problems(seed, 300), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.im2col", "300 random problems", summary, seed));
  EXPECT_EQ(summary.passed, 900);
}

// Tiled, on real data against the reference's error bound: the edge cases (strided, padded,
// dilated, grouped, end-padded) and random problems, with tiles that divide few outputs.
TEST(CpuIm2col, TiledMatchesTheReference) {
  set_num_threads(2);
  const uint64_t seed = run_seed() + 7;
  std::vector<ConvProblem> problems = edge_cases();
  for (const ConvProblem& p : random_problems(seed, 60)) problems.push_back(p);
  for (int64_t tile : {1, 7, 100}) {
    im2col::Im2colOptions options;
    options.tile = tile;
    const im2col::CpuIm2col algo(options);
    const auto summary = check_corpus(algo, problems, all_passes(), seed);
    const std::string label = "tile " + std::to_string(tile);
    EXPECT_TRUE(report_corpus("cpu.im2col", label, summary, seed)) << label;
    EXPECT_EQ(summary.passed, static_cast<int>(problems.size() * 3)) << label;
  }
}

// Small-integer data makes every partial sum exact in fp32, whatever the GEMM's order:
// cpu.im2col must then equal the reference bit for bit.
TEST(CpuIm2col, IntegerDataIsExact) {
  set_num_threads(2);
  const uint64_t seed = run_seed() + 3;
  std::vector<ConvProblem> problems = edge_cases();
  for (const ConvProblem& p : random_problems(seed, 60)) problems.push_back(p);
  const auto summary = check_corpus(algorithm(), problems, all_passes(), seed, Fill::integers);
  EXPECT_TRUE(report_corpus("cpu.im2col", "integer data, exact", summary, seed));
  EXPECT_EQ(summary.failed, 0);
}

// Every combination of the settings is a different cut of the same sums; on integer data each
// must be exact. Problems with several images and groups exercise chunks that end at a group
// boundary, chunks shorter than b, and uneven worker slices.
TEST(CpuIm2col, EverySettingIsExact) {
  const uint64_t seed = run_seed() + 4;
  std::vector<ConvProblem> problems;
  for (const ConvProblem& p : edge_cases()) {
    if (p.n > 1 || p.groups > 1) problems.push_back(p);
  }
  for (ConvProblem p : random_problems(seed, 12)) {
    p.n = 5;
    problems.push_back(p);
  }
  using im2col::ParallelMode;
  using im2col::TapMode;
  using im2col::DataForm;
  struct Setting {
    int64_t images;
    ParallelMode mode;
    int64_t tile;
    TapMode taps;
    DataForm bwd_data = DataForm::automatic;
  };
  // Tiles of 1 and 7 pixels divide few outputs and 7 cuts output rows in the middle. The tap
  // classes run each class over a worker's images in chunks of their own size.
  const Setting settings[] = {{1, ParallelMode::gemm, 0, TapMode::all},
                              {2, ParallelMode::gemm, 0, TapMode::all},
                              {1, ParallelMode::images, 0, TapMode::all},
                              {3, ParallelMode::images, 0, TapMode::all},
                              {0, ParallelMode::images, 0, TapMode::all},
                              {5, ParallelMode::automatic, 0, TapMode::all},
                              {0, ParallelMode::gemm, 7, TapMode::automatic},
                              {0, ParallelMode::images, 1, TapMode::automatic},
                              {3, ParallelMode::automatic, 7, TapMode::automatic},
                              {1, ParallelMode::gemm, 0, TapMode::in_image},
                              {2, ParallelMode::images, 0, TapMode::in_image},
                              {0, ParallelMode::automatic, 0, TapMode::in_image},
                              {0, ParallelMode::channels, 0, TapMode::in_image},
                              {2, ParallelMode::channels, 0, TapMode::in_image},
                              {0, ParallelMode::images, 0, TapMode::all, DataForm::col2im},
                              {0, ParallelMode::gemm, 7, TapMode::all, DataForm::col2im},
                              {2, ParallelMode::images, 0, TapMode::in_image, DataForm::col2im}};
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (const Setting& s : settings) {
      im2col::Im2colOptions options;
      options.images_per_gemm = s.images;
      options.parallel = s.mode;
      options.tile = s.tile;
      options.backend = im2col::GemmBackend::unpacked;
      options.taps = s.taps;
      options.bwd_data = s.bwd_data;
      const im2col::CpuIm2col algo(options);
      const auto summary = check_corpus(algo, problems, all_passes(), seed, Fill::integers);
      const std::string label = std::to_string(threads) + " threads, " + std::to_string(s.images) +
                                " images per GEMM, parallel " + im2col::to_string(s.mode) +
                                ", tile " + std::to_string(s.tile) + ", taps " +
                                im2col::to_string(s.taps) + ", bwd_data " +
                                im2col::to_string(s.bwd_data);
      EXPECT_TRUE(report_corpus("cpu.im2col", label, summary, seed)) << label;
      const int cases = static_cast<int>(problems.size() * all_passes().size());
      EXPECT_EQ(summary.passed, cases) << label;
    }
  }
  set_num_threads(2);
}

// Each GEMM backend the build has, in both parallel modes, exact on integer data.
TEST(CpuIm2col, EveryGemmBackendIsExact) {
  set_num_threads(2);
  const uint64_t seed = run_seed() + 7;
  std::vector<ConvProblem> problems = edge_cases();
  for (ConvProblem p : random_problems(seed, 10)) {
    p.n = 4;
    problems.push_back(p);
  }
  int backends = 0;
  for (const auto& entry : im2col::kGemmBackendNames) {
    const im2col::GemmBackend backend = entry.value;
    if (!im2col::gemm_backend_available(backend)) {
      std::cout << "cpu.im2col: GEMM backend " << entry.name << " not built in, not checked\n";
      continue;
    }
    ++backends;
    // The unpacked GEMM's kernels under every instruction set this CPU runs.
    std::vector<std::optional<CpuIsa>> isas{std::nullopt};
    if (backend == im2col::GemmBackend::unpacked) {
      isas.clear();
      for (const auto& isa : kCpuIsaNames) {
        if (cpu_isa_supported(isa.value)) {
          isas.emplace_back(isa.value);
        } else {
          std::cout << "cpu.im2col: unpacked GEMM with " << isa.name << " not run: not here\n";
        }
      }
    }
    for (const std::optional<CpuIsa> isa : isas) {
      for (im2col::ParallelMode mode : {im2col::ParallelMode::images, im2col::ParallelMode::gemm}) {
        im2col::Im2colOptions options;
        options.backend = backend;
        options.isa = isa;
        options.parallel = mode;
        options.images_per_gemm = 2;
        const im2col::CpuIm2col algo(options);
        const auto summary = check_corpus(algo, problems, all_passes(), seed, Fill::integers);
        const std::string label = std::string("GEMM ") + entry.name +
                                  (isa ? std::string(" ") + to_string(*isa) : std::string()) +
                                  ", parallel " + im2col::to_string(mode);
        EXPECT_TRUE(report_corpus("cpu.im2col", label, summary, seed)) << label;
      }
    }
  }
  EXPECT_GE(backends, 2);
}

// Runs a plan twice on the same inputs (output re-poisoned in between) and compares bits.
void expect_bitwise_repeatable(const Algorithm& algo, const ConvProblem& p, Pass pass,
                               uint64_t seed) {
  auto plan = algo.plan(p, pass);
  const HostTensors host = make_inputs(p, pass, seed);
  CaseBuffers buffers(algo.context(), p, host, plan->workspace_bytes());
  plan->run(buffers.tensors(), buffers.workspace());
  const std::vector<float> first = buffers.download_output(pass);
  buffers.reset_output(pass, host);
  plan->run(buffers.tensors(), buffers.workspace());
  const std::vector<float> second = buffers.download_output(pass);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0)
      << p.descriptor() << " " << to_string(pass) << ": two runs differ (" << plan->notes() << ")";
}

TEST(CpuIm2col, DeterministicWithFixedThreads) {
  set_num_threads(2);
  std::vector<ConvProblem> problems = edge_cases();
  for (ConvProblem p : random_problems(run_seed() + 5, 10)) {
    p.n = 6;
    problems.push_back(p);
  }
  im2col::Im2colOptions options;
  options.parallel = im2col::ParallelMode::images;
  const im2col::CpuIm2col images_mode(options);
  for (const ConvProblem& p : problems) {
    for (Pass pass : all_passes()) {
      expect_bitwise_repeatable(algorithm(), p, pass, run_seed());
      expect_bitwise_repeatable(images_mode, p, pass, run_seed());
    }
  }
}

// The unpacked GEMM splits C's columns over the threads of gemm mode, and backward-filter
// transposes B in the blocks the kernel sums in: every thread count gives the same bits.
TEST(CpuIm2col, UnpackedGemmSameBitsOnAnyThreadCount) {
  std::vector<ConvProblem> problems = {testing::problem("mb2ic40ih12oc70kh3ph1"),
                                       testing::problem("mb1ic3ih40oc20kh5ph2sh2")};
  for (ConvProblem p : random_problems(run_seed() + 8, 6)) problems.push_back(p);
  im2col::Im2colOptions options;
  options.backend = im2col::GemmBackend::unpacked;
  options.parallel = im2col::ParallelMode::gemm;
  for (const ConvProblem& p : problems) {
    for (Pass pass : all_passes()) {
      const HostTensors host = make_inputs(p, pass, run_seed());
      std::vector<float> first;
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        auto plan = im2col::CpuIm2col(options).plan(p, pass);
        CaseBuffers buffers(host_context(), p, host, plan->workspace_bytes());
        plan->run(buffers.tensors(), buffers.workspace());
        const std::vector<float> out = buffers.download_output(pass);
        if (threads == 1) {
          first = out;
          continue;
        }
        ASSERT_EQ(out.size(), first.size());
        EXPECT_EQ(std::memcmp(out.data(), first.data(), out.size() * sizeof(float)), 0)
            << p.descriptor() << " " << to_string(pass) << ": " << threads
            << " threads differ from 1 (" << plan->notes() << ")";
      }
    }
  }
  set_num_threads(2);
}

// Backward-filter may run dWᵀ = col dYᵀ instead of dW = dY colᵀ: the unpacked GEMM sums each
// element of either in the same depth blocks and order, however many of B's columns it
// transposes at once, so the two products are transposes of each other bit for bit.
TEST(CpuIm2col, UnpackedTransposedProductGivesTheSameBits) {
  std::mt19937 rng(static_cast<uint32_t>(run_seed()));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  auto random = [&](int64_t count) {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (float& e : v) e = value(rng);
    return v;
  };
  const CpuIsa isa = cpu_isa("auto", "");
  // dW's rows, its columns, the pixels. The last shape's transposed product has an A depth
  // block over 1 MiB (1200 x 256 floats): its B (dY) is transposed all columns at once.
  using Shape = std::array<int64_t, 3>;
  for (const auto& [m, n, k] : {Shape{7, 150, 40}, Shape{70, 360, 300}, Shape{300, 1200, 256}}) {
    const std::vector<float> dy = random(m * k), col = random(n * k), start = random(m * n);
    std::vector<float> start_t(start.size());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) start_t[j * m + i] = start[i * n + j];
    for (int threads : {1, 2}) {
      const im2col::GemmScratch direct =
          im2col::plan_gemm_scratch(im2col::GemmBackend::unpacked, true, m, n, k, threads, isa);
      const im2col::GemmScratch flipped =
          im2col::plan_gemm_scratch(im2col::GemmBackend::unpacked, true, n, m, k, threads, isa);
      std::vector<float> scratch((std::max(direct.bytes, flipped.bytes) + 63) / 4 + 16);
      float* aligned = reinterpret_cast<float*>(
          (reinterpret_cast<std::uintptr_t>(scratch.data()) + 63) / 64 * 64);
      std::vector<float> c = start, c_t = start_t;
      im2col::sgemm(im2col::GemmBackend::unpacked, false, true, m, n, k, dy.data(), k, col.data(),
                    k, 1.0f, c.data(), n, direct, aligned);
      im2col::sgemm(im2col::GemmBackend::unpacked, false, true, n, m, k, col.data(), k, dy.data(),
                    k, 1.0f, c_t.data(), m, flipped, aligned);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const float a = c[i * n + j], b = c_t[j * m + i];
          ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0)
              << m << "x" << n << "x" << k << " on " << threads << " threads, element (" << i
              << ", " << j << "): " << a << " against " << b;
        }
    }
  }
}

// The implicit column buffer reads each row of the column buffer where it lies in the padded
// image (backward-filter: each column): the same values, multiplied in the same order (each
// output one dot product over the depth, in the same depth blocks), so every pass gives the
// column buffer's bits, whatever the tiles, images per GEMM and threads; run() stays inside its
// workspace. Against the reference on integers over the corpus, and refused with its reason
// where it cannot run.
TEST(CpuIm2col, ImplicitColumnsGiveTheBuffersBits) {
  const std::vector<ConvProblem> problems = {
      testing::problem("mb3ic5ih17oc7kh3ph1"),          testing::problem("mb2ic4ih9iw13oc6kh3kw5ph1pw2"),
      testing::problem("mb2ic6ih12oc6kh3ph2dh1"),        testing::problem("g2mb2ic8ih10oc6kh5ph2"),
      testing::problem("mb2ic3ih6iw6oc4kh1kw1ph1pw1"),   testing::problem("mb1ic3ih8oc3kh2ph0"),
      testing::problem("mb2ic16ih20oc16kh3ph1"),         testing::problem("mb3ic2ih5oc2kh3ph3"),
      testing::problem("mb5ic6ih11oc40kh3sh2ph1"),       testing::problem("mb4ic7ih9oc5kh3ph1dh2")};
  im2col::Im2colOptions buffer;
  buffer.backend = im2col::GemmBackend::unpacked;
  buffer.taps = im2col::TapMode::all;
  buffer.columns = im2col::ColumnForm::buffer;
  for (const ConvProblem& p : problems) {
    for (Pass pass : all_passes()) {
      const HostTensors host = make_inputs(p, pass, testing::run_seed());
      for (const auto [tile, images] : {std::pair<int64_t, int64_t>{0, 0}, {0, 2}, {7, 0},
                                        {64, 0}}) {
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          buffer.tile = tile;
          buffer.images_per_gemm = images;
          im2col::Im2colOptions implicit = buffer;
          implicit.columns = im2col::ColumnForm::implicit;
          const im2col::CpuIm2col implicit_algo(implicit);
          if (!implicit_algo.supports(p, pass)) {
            // Backward-data whose transposed form pads more than the problem runs col2im, and
            // forward and backward-data need stride 1.
            EXPECT_NE(pass, Pass::backward_filter) << p.descriptor();
            EXPECT_TRUE(pass == Pass::backward_data || p.stride_h > 1) << p.descriptor();
            continue;
          }
          auto plan = implicit_algo.plan(p, pass);
          ASSERT_NE(plan->notes().find("columns implicit"), std::string::npos) << plan->notes();
          const std::vector<float> got = run_within_workspace(*plan, p, pass, host);
          auto reference = im2col::CpuIm2col(buffer).plan(p, pass);
          const std::vector<float> want = run_within_workspace(*reference, p, pass, host);
          ASSERT_EQ(got.size(), want.size());
          ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
              << p.descriptor() << " " << to_string(pass) << " tile " << tile << ", "
              << images << " images per GEMM, " << threads << " threads";
        }
      }
    }
  }
  set_num_threads(2);

  buffer.tile = im2col::kAutoTile;
  buffer.images_per_gemm = 0;
  im2col::Im2colOptions implicit = buffer;
  implicit.columns = im2col::ColumnForm::implicit;
  const uint64_t seed = testing::run_seed() + 9;
  std::vector<ConvProblem> corpus = edge_cases();
  for (const ConvProblem& p : random_problems(seed, 16)) corpus.push_back(p);
  const auto summary = check_corpus(im2col::CpuIm2col(implicit), corpus, all_passes(), seed,
                                    Fill::integers);
  EXPECT_TRUE(report_corpus("cpu.im2col", "columns=implicit", summary, seed));
  EXPECT_GT(summary.passed, 10);
  // What it refuses, it refuses for one of its reasons: a stride (forward, backward-data),
  // col2im's backward-data, a 1x1 unpadded convolution.
  for (const std::string& reason : summary.unsupported_reasons) {
    EXPECT_NE(reason.find("columns=implicit"), std::string::npos) << reason;
  }
}

// The masked column buffer (columns=masked: the GEMM reads the taps in x, or dy, itself, the
// padding's lanes masked off, and writes the output in place) is exact on integer data in
// forward and the transposed backward-data: same-padded layers, an even kernel padded on one
// side, dilation, groups, rows of one pixel, images of several column panels with a partial
// last one, and the suites' layers. Its bits are the same from run to run and at 1, 2 and 3
// threads (images or the GEMM's columns split; each output is one dot product in the depth
// order either way). What it refuses, it refuses with one of its reasons.
TEST(CpuIm2col, MaskedColumnsAreExactAndDeterministic) {
  im2col::Im2colOptions options;
  options.backend = im2col::GemmBackend::unpacked;
  options.taps = im2col::TapMode::all;
  options.columns = im2col::ColumnForm::masked;
  const im2col::CpuIm2col masked(options);
  std::vector<ConvProblem> corpus = {testing::problem("mb3ic5ih17oc7kh3ph1"),
                                     testing::problem("mb2ic4ih9iw13oc6kh3kw5ph1pw2"),
                                     testing::problem("mb2ic6ih12oc6kh3ph2dh1"),
                                     testing::problem("g2mb2ic8ih10oc6kh5ph2"),
                                     testing::problem("mb2ic5ih9iw8oc4oh9ow8kh2kw2ph1pw1"),
                                     testing::problem("mb2ic8ih37iw1oc8kh3kw1ph1pw0"),
                                     testing::problem("mb1ic33ih9iw70oc7kh5kw7ph2pw3"),
                                     testing::problem("mb2ic40ih20oc36kh3ph1"),
                                     testing::problem("mb2ic4ih12oc40kh3ph1"),
                                     testing::problem("mb2ic6ih11oc5kh3sh2ph1"),
                                     testing::problem("mb2ic6ih11oc5kh3")};
  for (const ConvProblem& p : testing::scaled_suite_layers()) corpus.push_back(p);
  const uint64_t seed = testing::run_seed() + 11;
  set_num_threads(2);
  const auto summary = check_corpus(masked, corpus, all_passes(), seed, Fill::integers);
  EXPECT_TRUE(report_corpus("cpu.im2col", "columns=masked", summary, seed));
  EXPECT_GT(summary.passed, 20);
  for (const std::string& reason : summary.unsupported_reasons) {
    EXPECT_NE(reason.find("columns=masked"), std::string::npos) << reason;
    EXPECT_TRUE(reason.find("backward-filter's GEMM sums over the output pixels") !=
                    std::string::npos ||
                reason.find("needs OW = W") != std::string::npos ||
                reason.find("stride") != std::string::npos ||
                reason.find("by col2im") != std::string::npos ||
                reason.find("1x1 unpadded") != std::string::npos)
        << reason;
  }
  for (const char* text : {"mb3ic7ih17oc5kh3ph1", "g2mb2ic8ih10oc6kh5ph2", "mb2ic40ih20oc36kh3ph1",
                           "mb1ic33ih9iw70oc7kh5kw7ph2pw3"}) {
    const ConvProblem p = testing::problem(text);
    for (Pass pass : {Pass::forward, Pass::backward_data}) {
      const HostTensors host = make_inputs(p, pass, seed);
      std::vector<float> first;
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        auto plan = masked.plan(p, pass);
        ASSERT_NE(plan->notes().find("columns masked"), std::string::npos) << plan->notes();
        for (int run = 0; run < 2; ++run) {
          const std::vector<float> got = run_within_workspace(*plan, p, pass, host);
          if (first.empty()) first = got;
          ASSERT_EQ(got.size(), first.size());
          ASSERT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)), 0)
              << text << " " << to_string(pass) << " at " << threads << " threads, run " << run;
        }
      }
    }
  }
  set_num_threads(2);
  // A tile is the column buffer's or the padded grid's: refused, with the reason.
  im2col::Im2colOptions tiled = options;
  tiled.tile = 64;
  const Support refused =
      im2col::CpuIm2col(tiled).supports(testing::problem("mb2ic8ih20oc8kh3ph1"), Pass::forward);
  EXPECT_FALSE(refused);
  EXPECT_NE(refused.reason.find("tile=64"), std::string::npos) << refused.reason;
}

// No oversubscription: our threads times the GEMM library's are the thread count, in every
// mode, and the plan records both.
TEST(CpuIm2col, OwnThreadsTimesGemmThreadsIsTheThreadCount) {
  const ConvProblem p = testing::problem("mb6ic4ih9oc5kh3ph1");
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (auto mode : {im2col::ParallelMode::automatic, im2col::ParallelMode::images,
                      im2col::ParallelMode::gemm, im2col::ParallelMode::channels,
                      im2col::ParallelMode::in_channels}) {
      im2col::Im2colOptions options;
      options.parallel = mode;
      options.taps = im2col::TapMode::in_image;  // the channels modes split the classes' GEMMs
      options.backend = im2col::GemmBackend::unpacked;
      const im2col::Im2colLayout layout = im2col::im2col_layout(p, Pass::forward, options, threads);
      const int64_t own = layout.workers;
      EXPECT_EQ(own * layout.gemm_threads, threads) << to_string(mode);
      if (mode == im2col::ParallelMode::gemm) EXPECT_EQ(own, 1);
      if ((mode == im2col::ParallelMode::channels || mode == im2col::ParallelMode::in_channels) &&
          threads > 1) {
        EXPECT_EQ(layout.mode, mode);
      }
      const auto plan = im2col::CpuIm2col(options).plan(p, Pass::forward);
      std::map<std::string, std::string> details(plan->info().details.begin(),
                                                 plan->info().details.end());
      EXPECT_EQ(details["own_threads"], std::to_string(own));
      EXPECT_EQ(details["gemm_threads"], std::to_string(layout.gemm_threads));
    }
  }
  set_num_threads(2);
}

int64_t pad16(int64_t floats) { return (floats + 15) / 16 * 16; }

// workspace_bytes() is the formula of docs/strategy-im2col.md, and run() writes nothing past
// it (a guard zone after the workspace keeps its pattern).
TEST(CpuIm2col, WorkspaceIsTheFormulaAndRunStaysInside) {
  set_num_threads(2);
  std::vector<ConvProblem> problems = edge_cases();
  for (ConvProblem p : random_problems(run_seed() + 6, 8)) {
    p.n = 4;
    problems.push_back(p);
  }
  // The default GEMM library, Eigen, whose packing buffers the workspace holds, and the
  // unpacked GEMM, whose transposed B it holds.
  std::vector<im2col::GemmBackend> backends = {im2col::default_gemm_backend()};
  if (backends[0] != im2col::GemmBackend::eigen) backends.push_back(im2col::GemmBackend::eigen);
  backends.push_back(im2col::GemmBackend::unpacked);
  for (const im2col::GemmBackend backend : backends)
    for (const auto [images, tile] : {std::pair<int64_t, int64_t>{0, 0}, {1, 0}, {3, 0}, {0, 5}})
      for (const im2col::TapMode taps : {im2col::TapMode::all, im2col::TapMode::in_image})
      for (const im2col::ColumnForm columns : {im2col::ColumnForm::buffer,
                                               im2col::ColumnForm::implicit,
                                               im2col::ColumnForm::masked}) {
        im2col::Im2colOptions options;
        options.backend = backend;
        options.images_per_gemm = images;
        options.tile = tile;
        options.taps = taps;
        options.columns = columns;
        const bool implicit = columns == im2col::ColumnForm::implicit;
        const bool masked = columns == im2col::ColumnForm::masked;
        const im2col::CpuIm2col algo(options);
        for (const ConvProblem& p : problems) {
          for (Pass pass : all_passes()) {
            const bool pointwise = p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                                   p.pad_h == 0 && p.pad_w == 0 && p.end_pad_h() == 0 &&
                                   p.end_pad_w() == 0;
            const bool stride_1 = p.stride_h == 1 && p.stride_w == 1;
            // With every tap, a stride-1 backward-data padded on every side at least as much
            // as its transposed convolution, with K/g <= C/g or its buffer read in place
            // (columns=implicit, at least 32 rows C/g), is that convolution: dy's K/g
            // channels in the column buffer, dx's C/g pixels its columns and rows of the GEMM.
            const auto pads = [](int64_t reach, int64_t begin, int64_t end) {
              return reach - begin <= begin && reach - end <= end;
            };
            const bool in_place = (implicit || masked) &&
                                  backend == im2col::GemmBackend::unpacked &&
                                  p.c_per_group() >= 32;
            const bool transposed_all =
                taps == im2col::TapMode::all && pass == Pass::backward_data && !pointwise &&
                p.stride_h == 1 && p.stride_w == 1 &&
                (p.k_per_group() <= p.c_per_group() || in_place) &&
                pads(p.dilation_h * (p.r - 1), p.pad_h, p.end_pad_h()) &&
                pads(p.dilation_w * (p.s - 1), p.pad_w, p.end_pad_w());
            // Backward-data by col2im writes its column buffer: nothing to read in place.
            // Backward-filter reads the column buffer's columns at any stride.
            const bool filter_implicit = implicit && pass == Pass::backward_filter;
            // The masked form: forward and the transposed backward-data, one GEMM per image
            // (no tile), whose output rows are as wide as its input's.
            const int64_t masked_in_w = transposed_all ? p.out_w() : p.w;
            const int64_t masked_out_w = transposed_all ? p.w : p.out_w();
            if (masked &&
                (pass == Pass::backward_filter || tile > 0 || masked_in_w != masked_out_w ||
                 (pass == Pass::backward_data && !transposed_all))) {
              EXPECT_FALSE(algo.supports(p, pass)) << p.descriptor() << " " << to_string(pass);
              EXPECT_THROW(algo.plan(p, pass), Error);
              continue;
            }
            if (((implicit || masked) && pass == Pass::backward_data && !transposed_all) ||
                (taps == im2col::TapMode::in_image &&
                 (tile > 0 || backend != im2col::GemmBackend::unpacked)) ||
                ((implicit || masked) && (taps == im2col::TapMode::in_image ||
                                          backend != im2col::GemmBackend::unpacked ||
                                          (!stride_1 && !filter_implicit) || pointwise))) {
              EXPECT_FALSE(algo.supports(p, pass)) << p.descriptor() << " " << to_string(pass);
              EXPECT_THROW(algo.plan(p, pass), Error);
              continue;
            }
            const im2col::Im2colLayout layout = im2col::im2col_layout(p, pass, options, 2);
            const int64_t b = layout.images_per_gemm, workers = layout.workers;
            EXPECT_EQ(layout.transposed && !layout.tap_classes, transposed_all)
                << p.descriptor();
            EXPECT_EQ(layout.implicit, implicit) << p.descriptor() << " " << to_string(pass);
            EXPECT_EQ(layout.masked, masked) << p.descriptor() << " " << to_string(pass);
            const int64_t pixels = transposed_all ? p.h * p.w : p.out_h() * p.out_w();
            const int64_t rows = (transposed_all ? p.k_per_group() : p.c_per_group()) * p.r * p.s;
            const int64_t out_rows = transposed_all ? p.c_per_group() : p.k_per_group();
            // A tile: one image at a time, a buffer tile (at most the image) wide.
            const bool tiled = tile > 0 && !pointwise;
            if (tiled) EXPECT_EQ(b, 1);
            const int64_t cols = tiled ? std::min(tile, pixels) : b * pixels;
            if ((!implicit || filter_implicit) && !masked) {
              EXPECT_EQ(layout.tile, tiled ? cols : 0);
            }
            int64_t col = pointwise ? 0 : pad16(rows * cols), index = 0, panel = 0;
            int64_t flipped = transposed_all ? pad16(p.w_elems()) : 0, ordered = 0;
            int64_t gemm_rows = rows, gemm_cols = cols;  // backward-filter's GEMM: Kg x these
            int64_t stage = b > 1 ? pad16(out_rows * b * pixels) : 0;
            int64_t filter_channels = p.c_per_group();  // a worker's rows of dW^T, by R*S*K
            if (filter_implicit) {
              // The chunk's b images padded to the taps' reach, (OH-1)*sh + dh*(R-1) + 1 by
              // (OW-1)*sw + dw*(S-1) + 1 per input channel, one depth block of dY transposed
              // (at most 256 pixels of the block), and that block's pixels' int64 offsets.
              // Neighbouring rows share the padding columns both sides have.
              const int64_t hp = (p.out_h() - 1) * p.stride_h + p.dilation_h * (p.r - 1) + 1;
              const int64_t wp = (p.out_w() - 1) * p.stride_w + p.dilation_w * (p.s - 1) + 1;
              const int64_t shared = std::max<int64_t>(
                  0, std::min<int64_t>({p.pad_w, wp - p.pad_w - p.w, wp - p.out_w()}));
              // Split by input channels (channels mode), a worker pads its share of them,
              // cut at the GEMM's register tile rows (6): the larger of two parts.
              const int64_t units = (p.c_per_group() + 5) / 6;
              const int64_t first = std::min(p.c_per_group(), units / 2 * 6);
              const int64_t channels = layout.mode == im2col::ParallelMode::channels
                                           ? std::max(first, p.c_per_group() - first)
                                           : p.c_per_group();
              col = pad16(b * channels * (hp * (wp - shared) + shared));
              filter_channels = channels;
              stage = pad16(p.k_per_group() * std::min<int64_t>(cols, 256));
              index = pad16(2 * std::min<int64_t>(cols, 256));
            } else if (implicit) {
              // One image padded to (OH + dh*(R-1)) x (OW + dw*(S-1)) per channel of the
              // convolution's input, its rows sharing the padding columns both sides have (a
              // pitch of Wp - shared, `shared` zeros after the plane), a product of one block
              // of grid columns (a tile of them, or all (OH-1)*pitch + OW), and the rows' int64
              // offsets.
              const Im2colGeometry g =
                  transposed_all ? transposed_geometry(p) : make_im2col_geometry(p, 1);
              const int64_t hp = g.out_h + g.dilation_h * (p.r - 1);
              const int64_t wp = g.out_w + g.dilation_w * (p.s - 1);
              const int64_t shared = std::max<int64_t>(
                  0, std::min<int64_t>({g.pad_w, wp - g.pad_w - g.in_w, wp - g.out_w}));
              const int64_t pitch = wp - shared;
              const int64_t grid_columns = (g.out_h - 1) * pitch + g.out_w;
              const int64_t block = tile > 0 ? std::min(tile, grid_columns) : grid_columns;
              EXPECT_EQ(b, 1);
              EXPECT_EQ(layout.tile, block);
              col = pad16(g.channels * (hp * pitch + shared));
              stage = pad16(out_rows * block);
              index = pad16(2 * rows);
            } else if (masked) {
              // One GEMM per image from the input into the output, both in place: the depth
              // steps' int64 offsets and lane rows, and R*S taps' lane bits, a bit per output
              // pixel in 16-bit words; the filter reordered (flipped for backward-data).
              EXPECT_EQ(b, 1);
              EXPECT_EQ(layout.tile, 0);
              col = 0;
              stage = 0;
              const int64_t words = (pixels + 15) / 16;
              index = pad16(4 * rows) + pad16((p.r * p.s * words + 1) / 2);
              flipped = 0;
              ordered = pad16(p.w_elems());
            }
            if (taps == im2col::TapMode::in_image) {
              // The largest class's column buffer and stage, each class batching images up to
              // 256 columns (or images_per_gemm), no more than a worker's, in even chunks.
              // Backward-data with stride 1: the transposed convolution's classes (dy's K/g
              // channels in the column buffer, dx's C/g in the stage).
              const bool transposed =
                  pass == Pass::backward_data && p.stride_h == 1 && p.stride_w == 1;
              const Im2colGeometry g =
                  transposed ? transposed_geometry(p) : make_im2col_geometry(p, 1);
              // A worker's images: its slice's, or (the channels modes) every image.
              const int64_t longest =
                  layout.mode == im2col::ParallelMode::channels ||
                          layout.mode == im2col::ParallelMode::in_channels
                      ? p.n
                      : std::min(p.n, (p.groups * p.n + workers - 1) / workers);
              int64_t largest_col = 0, widest = 0, most_taps = 0, block_rows = 0, staged = 0;
              const std::vector<TapClass> classes =
                  tap_classes(g, im2col::tap_class_cut(p, transposed));
              for (const TapClass& c : classes) most_taps = std::max(most_taps, class_taps(c));
              const bool filter = pass == Pass::backward_filter;
              for (const TapClass& c : classes) {
                const int64_t px = std::max<int64_t>(1, class_pixels(c));
                // Backward-filter: one chunk of every image of the worker per class. Chunks
                // of even size, as many as a requested count needs, or the nearest count to
                // the automatic one's.
                int64_t bc = images > 0 ? images : filter ? longest : (256 + px - 1) / px;
                bc = std::clamp<int64_t>(bc, 1, longest);
                const int64_t chunks = images > 0 || filter
                                           ? (longest + bc - 1) / bc
                                           : std::max<int64_t>(1, (2 * longest + bc) / (2 * bc));
                bc = (longest + chunks - 1) / chunks;
                // The column buffer holds a block of channels of at most 256 rows (whole
                // channels, at least one); the adjoint backward-data's the whole class.
                // Backward-filter: one block for every class, by the most taps of a class.
                const bool adjoint = pass == Pass::backward_data && !transposed;
                const int64_t channels =
                    adjoint ? g.channels
                            : std::clamp<int64_t>(
                                  256 / std::max<int64_t>(filter ? most_taps : class_taps(c), 1),
                                  1, std::max<int64_t>(g.channels, 1));
                // Forward's and the transposed backward-data's rows, the GEMM's B, start
                // whole 64-byte lines: a multiple of 16 floats apart.
                const int64_t width = bc * class_pixels(c);
                const int64_t pitch = adjoint || filter ? width : pad16(width);
                largest_col = std::max(largest_col, channels * class_taps(c) * pitch);
                block_rows = std::max(block_rows, channels * class_taps(c));
                staged += class_pixels(c);
                widest = std::max(widest, bc * class_pixels(c));
              }
              col = pad16(largest_col);
              stage = pad16((transposed ? p.c_per_group() : p.k_per_group()) * widest);
              // The int64 filter columns of a class, which backward-filter adds into by runs.
              index = pass == Pass::backward_filter ? 0 : pad16(2 * g.channels * most_taps);
              flipped = 0;  // the classes read the flipped filter from w in place
              EXPECT_TRUE(layout.tap_classes);
              EXPECT_EQ(layout.transposed, transposed);
              if (pass == Pass::backward_filter) {
                // The worker's dY staged class by class; a block's dW columns, and its GEMM
                // (K/g x block x the class's columns) in place of the full buffer's.
                stage = pad16(p.k_per_group() * staged * longest);
                panel = pad16(p.k_per_group() * block_rows);
                gemm_rows = block_rows;
                gemm_cols = widest;
              }
            }
            // Channels mode's workers sum disjoint rows of dW: no partials; split by input
            // channels, each extra worker sums a whole output of its own.
            const int64_t partial =
                layout.mode == im2col::ParallelMode::in_channels
                    ? pad16(pass == Pass::forward ? p.y_elems() : p.x_elems())
                : pass == Pass::backward_filter && layout.mode != im2col::ParallelMode::channels
                    ? pad16(p.w_elems())
                    : 0;
            // The GEMM's buffers: Eigen's blocking of the pass's widest GEMM; for the unpacked
            // GEMM, backward-filter's transposed B (the column buffer, Bᵀ of dW = dY colᵀ, or
            // dY, Bᵀ of dWᵀ = col dYᵀ) in
            // blocks of 256 rows of its inner dimension by 64 columns, one per thread that has
            // columns (each takes a share in multiples of 64); none for the libraries that keep
            // their own.
            const int64_t kg = p.k_per_group();
            const int gemm_threads = workers > 1 ? 1 : 2;
            int64_t gemm = 0;
            if (layout.backend == im2col::GemmBackend::eigen) {
              const CpuIsa any = CpuIsa::generic;
              const im2col::GemmScratch scratch =
                  pass == Pass::forward ? im2col::plan_gemm_scratch(layout.backend, false, kg, cols,
                                                                    rows, gemm_threads, any)
                  : pass == Pass::backward_data
                      ? (transposed_all ? im2col::plan_gemm_scratch(layout.backend, false, out_rows,
                                                                    cols, rows, gemm_threads, any)
                                        : im2col::plan_gemm_scratch(layout.backend, false, rows,
                                                                    cols, kg, gemm_threads, any))
                      : im2col::plan_gemm_scratch(layout.backend, true, kg, rows, cols,
                                                  gemm_threads, any);
              gemm = static_cast<int64_t>(scratch.bytes / 4);
            }
            // Every tap on the unpacked GEMM, where the column buffer has more rows than dY
            // and the product's inner dimension is one depth block (256): backward-filter runs
            // dWᵀ = col dYᵀ, its transposed B dY's K/g rows, into a dWᵀ of each worker's own.
            // The implicit form always: its GEMMs read the padded images as A (one per tap).
            const bool dw_transposed =
                filter_implicit || (layout.backend == im2col::GemmBackend::unpacked &&
                                    pass == Pass::backward_filter &&
                                    taps == im2col::TapMode::all && rows > kg && cols <= 256);
            EXPECT_EQ(layout.dw_transposed, dw_transposed) << p.descriptor();
            const int64_t dw_t =
                dw_transposed ? pad16(p.groups * kg * filter_channels * p.r * p.s) : 0;
            int64_t gemm_m = kg;  // the rows of C
            if (dw_transposed) {
              gemm_m = gemm_rows;
              gemm_rows = kg;
            }
            // The implicit form transposes dY itself, into the stage: no GEMM scratch.
            if (layout.backend == im2col::GemmBackend::unpacked && pass == Pass::backward_filter &&
                !filter_implicit && kg > 0 && gemm_rows > 0 && gemm_cols > 0) {
              const int64_t units = (gemm_rows + 63) / 64;
              const int64_t threads = std::min<int64_t>(gemm_threads, units);
              const int64_t share = (units + threads - 1) / threads * 64;
              const int64_t used = (gemm_rows + share - 1) / share;  // threads with columns
              // A taller C than a thread's columns are wide, with A's depth block over 1 MiB,
              // transposes all of them (up to 512) at once, else 64.
              const int64_t wide = std::min<int64_t>({gemm_rows, share, 512});
              const bool wide_a = gemm_m * std::min<int64_t>(gemm_cols, 256) * 4 > (1 << 20);
              const int64_t block = gemm_m > wide && wide_a ? wide : std::min<int64_t>(wide, 64);
              gemm = used * pad16(std::min<int64_t>(gemm_cols, 256) * block);
            }
            const int64_t formula =
                4 * (workers * (col + stage + panel + gemm + index + dw_t) +
                     (workers - 1) * partial + flipped + ordered);
            auto plan = algo.plan(p, pass);
            ASSERT_EQ(static_cast<int64_t>(plan->workspace_bytes()), formula)
                << p.descriptor() << " " << to_string(pass) << ": " << plan->notes();
            if (images > 0) EXPECT_LE(b, images);
            if (pointwise && taps == im2col::TapMode::all) EXPECT_EQ(b, 1);

            (void)run_within_workspace(*plan, p, pass, make_inputs(p, pass, run_seed()));
          }
        }
      }
}

// Whether columns=auto takes the masked form on this CPU: only where the unpacked GEMM's build
// for its instruction set masks loads natively (AVX-512), on an AMD CPU.
bool auto_masks_here() { return im2col::masked_columns_by_default(cpu_isa("auto", "isa")); }

// The automatic tile and images per GEMM follow the backend: the unpacked GEMM cuts images
// of more than 256 pixels into tiles of 256 (or, where forward and the transposed
// backward-data read the column buffer masked in place, runs one GEMM over the image, which
// blocks its own columns; elsewhere the implicit form runs 256 grid columns at a time) and
// batches smaller ones up to 256 columns; the libraries batch whole images up to 1024 columns.
TEST(CpuIm2col, AutomaticBlockingFollowsTheGemmBackend) {
  const ConvProblem large = testing::problem("mb16ic8ih56oc8oh56kh3ph1");  // 3136 pixels
  const ConvProblem unpadded = testing::problem("mb16ic8ih58oc8oh56kh3");  // 3136 pixels
  const ConvProblem small = testing::problem("mb16ic8ih7oc8oh7kh3ph1");    // 49 pixels
  im2col::Im2colOptions unpacked, library;
  unpacked.backend = im2col::GemmBackend::unpacked;
  library.backend = im2col::GemmBackend::eigen;
  for (Pass pass : all_passes()) {
    const auto tiled = im2col::im2col_layout(large, pass, unpacked, 1);
    const bool masked = auto_masks_here() && pass != Pass::backward_filter;
    EXPECT_EQ(tiled.masked, masked);
    EXPECT_EQ(tiled.tile, masked ? 0 : 256);
    EXPECT_EQ(tiled.images_per_gemm, 1);
    EXPECT_EQ(im2col::CpuIm2col(unpacked).plan(large, pass)->info().tile,
              masked                          ? ""
              : pass == Pass::backward_filter ? "256 pixels"
                                              : "256 grid columns");
    // Output rows narrower than the input's: the implicit form, in blocks of grid columns
    // (backward-data by col2im, in tiles of pixels: its transposed convolution would pad).
    EXPECT_EQ(im2col::CpuIm2col(unpacked).plan(unpadded, pass)->info().tile,
              pass == Pass::forward ? "256 grid columns" : "256 pixels");
    const auto whole = im2col::im2col_layout(large, pass, library, 1);
    EXPECT_EQ(whole.tile, 0);
    EXPECT_EQ(whole.images_per_gemm, 1);
    // 49 pixels: ceil(256 / 49) = 6 images (16 images as 6 + 5 + 5), or all 16.
    const auto batched = im2col::im2col_layout(small, pass, unpacked, 1);
    EXPECT_EQ(batched.tile, 0);
    EXPECT_EQ(batched.images_per_gemm, 6);
    EXPECT_EQ(im2col::im2col_layout(small, pass, library, 1).images_per_gemm, 16);
    // An explicit 0 takes whole images with any backend.
    im2col::Im2colOptions whole_unpacked = unpacked;
    whole_unpacked.tile = 0;
    EXPECT_EQ(im2col::im2col_layout(large, pass, whole_unpacked, 1).tile, 0);
  }
}

// columns=auto reads the column buffer in place where that saves more copying than it costs,
// and records the form. Forward and the transposed backward-data on tiled images, where the
// GEMM masks its loads natively: masked wherever output rows are as wide as the input's
// (ResNet-50's 56x56 and 28x28 3x3 layers, VGG-16's and AlexNet's conv2, a 3-wide image), for
// it copies nothing and multiplies no extra columns, except where the column buffer has fewer
// than two rows per output row (VGG-16's conv1_1); without native masks (AVX2, or any CPU with
// isa=generic), implicit where that pays as below, else the buffer (a 1024-channel layer, the
// 3-wide image). Else (an unpadded layer) implicit, but not where its extra columns are over 15 %
// (a 3-wide output row under a 3x3 kernel takes 2 more), or cost over 32 products per
// column-buffer element (26x26 outputs at 1024 rows: 79), or the output has more than half the
// column buffer's rows (27 column rows, 64 output rows). Backward-filter, which multiplies no
// extra products: implicit wherever the padded images are smaller than the column buffer and
// its per-tap GEMMs have 32 rows (input channels) or more, tiled or not; not where the tap
// classes run (ResNet-50's 7x7 layer), nor on VGG-16's conv1_1 (3 channels) or a strided 1x1
// layer (its grid, (2*OH - 1)^2 per channel, is larger than its column buffer).
TEST(CpuIm2col, ImplicitColumnsWhereTheyPay) {
  im2col::Im2colOptions options;
  options.backend = im2col::GemmBackend::unpacked;
  auto implicit = [&](const char* text, Pass pass) {
    return im2col::im2col_layout(testing::problem(text), pass, options, 1).implicit;
  };
  auto masked = [&](const char* text, Pass pass) {
    return im2col::im2col_layout(testing::problem(text), pass, options, 1).masked;
  };
  const bool masks = auto_masks_here();
  for (const char* layer :
       {"mb16ic64ih56oc64kh3ph1", "mb16ic128ih28oc128kh3ph1", "mb16ic512ih28oc512kh3ph1",
        "mb16ic1024ih28oc1024kh3ph1", "mb2ic64ih300iw3oc64kh3kw3ph1pw1"}) {
    EXPECT_EQ(masked(layer, Pass::forward), masks) << layer;
    EXPECT_FALSE(masked(layer, Pass::backward_filter)) << layer;
  }
  for (const char* layer :
       {"mb16ic64ih56oc64kh3ph1", "mb16ic128ih28oc128kh3ph1", "mb16ic512ih28oc512kh3ph1"}) {
    EXPECT_EQ(implicit(layer, Pass::forward), !masks) << layer;
  }
  EXPECT_FALSE(implicit("mb16ic1024ih28oc1024kh3ph1", Pass::forward));
  EXPECT_FALSE(implicit("mb2ic64ih300iw3oc64kh3kw3ph1pw1", Pass::forward));
  {
    im2col::Im2colOptions generic = options;
    generic.isa = CpuIsa::generic;
    const ConvProblem layer = testing::problem("mb16ic64ih56oc64kh3ph1");
    for (Pass pass : {Pass::forward, Pass::backward_data}) {
      const auto layout = im2col::im2col_layout(layer, pass, generic, 1);
      EXPECT_FALSE(layout.masked) << to_string(pass);
      EXPECT_TRUE(layout.implicit) << to_string(pass);
    }
  }
  // VGG-16's conv1_1: 27 column rows for 64 output rows, the buffer (kMaskedMinRowsPerOutputRow).
  EXPECT_FALSE(masked("mb16ic3ih224oc64kh3ph1", Pass::forward));
  EXPECT_FALSE(implicit("mb16ic3ih224oc64kh3ph1", Pass::forward));
  for (const char* layer : {"mb16ic64ih56oc64kh3ph1", "mb16ic128ih28oc128kh3ph1",
                            "mb16ic512ih28oc512kh3ph1", "mb16ic64ih27oc192kh5ph2"}) {
    EXPECT_EQ(masked(layer, Pass::backward_data), masks) << layer;
    EXPECT_EQ(implicit(layer, Pass::backward_data), !masks) << layer;
  }
  for (const char* layer : {"mb16ic64ih56oc64kh3ph1", "mb16ic128ih28oc128kh3ph1"}) {
    EXPECT_TRUE(implicit(layer, Pass::backward_filter)) << layer;
  }
  EXPECT_FALSE(masked("mb16ic512ih7oc512kh3ph1", Pass::forward));    // tap classes
  EXPECT_FALSE(masked("mb16ic64ih56oc64kh3ph1sh2", Pass::forward));  // strided
  EXPECT_TRUE(implicit("mb16ic256ih14oc256kh3ph1", Pass::backward_filter));
  EXPECT_TRUE(implicit("mb16ic512ih28oc512kh3ph1", Pass::backward_filter));
  EXPECT_TRUE(implicit("mb16ic64ih27oc192kh5ph2", Pass::backward_filter));
  EXPECT_FALSE(implicit("mb16ic512ih7oc512kh3ph1", Pass::backward_filter));  // tap classes
  EXPECT_FALSE(implicit("mb16ic3ih224oc64kh3ph1", Pass::backward_filter));
  EXPECT_FALSE(implicit("mb16ic256ih56oc512kh1sh2", Pass::backward_filter));
  auto filter_plan = im2col::CpuIm2col(options).plan(
      testing::problem("mb2ic32ih20oc16kh3ph1"), Pass::backward_filter);
  EXPECT_NE(filter_plan->notes().find("columns implicit by pixel offsets"), std::string::npos)
      << filter_plan->notes();
  EXPECT_FALSE(implicit("mb2ic64ih300iw5oc64kh3kw3ph1", Pass::forward));  // 3 + 2 columns
  EXPECT_TRUE(implicit("mb16ic256ih28oc256kh3", Pass::forward));  // 2/26 * 256 = 19.7 products
  EXPECT_FALSE(implicit("mb16ic1024ih28oc1024kh3", Pass::forward));
  EXPECT_FALSE(implicit("mb16ic3ih226oc64kh3", Pass::forward));
  EXPECT_TRUE(implicit("mb16ic64ih226oc64kh3", Pass::forward));
  auto column_form = [&](const char* text) {
    auto plan = im2col::CpuIm2col(options).plan(testing::problem(text), Pass::forward);
    const auto& details = plan->info().details;
    const auto columns = std::find_if(details.begin(), details.end(),
                                      [](const auto& d) { return d.first == "columns"; });
    return std::make_pair(columns != details.end() ? columns->second : "", plan->info().tile);
  };
  EXPECT_EQ(column_form("mb2ic16ih40oc16kh3ph1"),
            masks ? std::make_pair(std::string("masked"), std::string())
                  : std::make_pair(std::string("implicit"), std::string("256 grid columns")));
  EXPECT_EQ(column_form("mb2ic16ih40oc16kh3"),
            std::make_pair(std::string("implicit"), std::string("256 grid columns")));
}

// taps=auto takes the tap classes where they run (forward and backward-data, the unpacked
// GEMM, whole images) and skip at least 5 % of the products: ResNet-50's 7x7 and 14x14 3x3
// layers, not its 56x56 one (tiled) nor an unpadded layer; the plan says which. Asked for where
// they cannot run, they are refused with the reason.
TEST(CpuIm2col, TapClassesWhereTheyPay) {
  using im2col::TapMode;
  im2col::Im2colOptions unpacked;
  unpacked.backend = im2col::GemmBackend::unpacked;
  const ConvProblem seven = testing::problem("mb16ic32ih7oc32kh3ph1");
  const ConvProblem fourteen = testing::problem("mb16ic16ih14oc16kh3ph1");
  const ConvProblem large = testing::problem("mb2ic8ih56oc8kh3ph1");
  const ConvProblem unpadded = testing::problem("mb4ic8ih9oc8kh3ph0");
  for (Pass pass : {Pass::forward, Pass::backward_data}) {
    const auto layout = im2col::im2col_layout(seven, pass, unpacked, 1);
    EXPECT_TRUE(layout.tap_classes);
    // The five merged classes, in both passes: backward-data's are the transposed
    // convolution's, which pads "same" as the problem does (369 of the 441 products: the
    // corners keep a few padding taps).
    EXPECT_EQ(layout.class_count, 5);
    EXPECT_EQ(layout.class_cut, ClassCut::merged);
    EXPECT_NEAR(layout.product_share, 369.0 / 441.0, 1e-12);
    // 16 images: the interior (25 pixels) reaches 256 columns with 11, and 16 / 11 rounds to
    // one chunk of 16; the rows and edges (7 and 5 pixels) take all 16 anyway.
    EXPECT_EQ(layout.class_images, std::vector<int64_t>(5, 16));
    // Asked for 11, the count is an upper bound: 8 + 8.
    im2col::Im2colOptions eleven = unpacked;
    eleven.images_per_gemm = 11;
    EXPECT_EQ(im2col::im2col_layout(seven, pass, eleven, 1).class_images,
              std::vector<int64_t>(5, 8));
    EXPECT_NE(layout.describe().find("taps in_image (5 classes, 83.7 % of the products)"),
              std::string::npos)
        << layout.describe();
    // Unpadded, the transposed convolution pads dy by the kernel, zeros the problem's own
    // padding never meets: backward-data's classes are then exact (5 row runs by 5 column
    // runs, only the 441 products that read dy of the 729 of 9x9 pixels by 9 taps).
    im2col::Im2colOptions in_image = unpacked;
    in_image.taps = TapMode::in_image;
    const auto exact = im2col::im2col_layout(unpadded, pass, in_image, 1);
    EXPECT_EQ(exact.class_cut, pass == Pass::forward ? ClassCut::merged : ClassCut::exact);
    if (pass == Pass::backward_data) {
      EXPECT_EQ(exact.class_count, 25);
      EXPECT_NEAR(exact.product_share, 441.0 / 729.0, 1e-12);
    }
    EXPECT_TRUE(im2col::im2col_layout(fourteen, pass, unpacked, 1).tap_classes);
    EXPECT_FALSE(im2col::im2col_layout(large, pass, unpacked, 1).tap_classes);
    EXPECT_FALSE(im2col::im2col_layout(unpadded, pass, unpacked, 1).tap_classes);
    const auto plan = im2col::CpuIm2col(unpacked).plan(seven, pass);
    std::map<std::string, std::string> details(plan->info().details.begin(),
                                               plan->info().details.end());
    // Backward-data with stride 1 runs the forward classes of dy by the flipped filter, which
    // it reads from w in place: no copy of it.
    EXPECT_EQ(details["taps"], pass == Pass::forward ? "in_image" : "in_image, transposed");
    EXPECT_EQ(layout.transposed, pass == Pass::backward_data);
    EXPECT_EQ(layout.flipped, 0);
  }
  // Backward-filter runs the forward form's five merged classes (its GEMM into the panel, added
  // into dW's columns of the class's taps).
  const auto filter_layout = im2col::im2col_layout(seven, Pass::backward_filter, unpacked, 1);
  EXPECT_TRUE(filter_layout.tap_classes);
  EXPECT_EQ(filter_layout.class_count, 5);
  EXPECT_FALSE(filter_layout.transposed);
  EXPECT_GT(filter_layout.panel, 0);
  // ... where they skip at least 12 % of the products: not at 14x14 (8.8 %).
  EXPECT_FALSE(im2col::im2col_layout(fourteen, Pass::backward_filter, unpacked, 1).tap_classes);
  im2col::Im2colOptions all = unpacked;
  all.taps = TapMode::all;
  EXPECT_FALSE(im2col::im2col_layout(seven, Pass::forward, all, 1).tap_classes);

  im2col::Im2colOptions asked = unpacked;
  asked.taps = TapMode::in_image;
  EXPECT_TRUE(im2col::CpuIm2col(asked).supports(seven, Pass::backward_filter));
  asked.tile = 16;
  const Support tiled = im2col::CpuIm2col(asked).supports(seven, Pass::forward);
  EXPECT_NE(tiled.reason.find("tile=16"), std::string::npos) << tiled.reason;
  asked.tile = im2col::kAutoTile;
  asked.backend = im2col::GemmBackend::eigen;
  const Support eigen = im2col::CpuIm2col(asked).supports(seven, Pass::forward);
  EXPECT_NE(eigen.reason.find("gemm=eigen"), std::string::npos) << eigen.reason;
  EXPECT_THROW(im2col::CpuIm2col(asked).plan(seven, Pass::forward), Error);
  // Asked for on a large image, the classes take whole images instead of the automatic tile.
  asked.backend = im2col::GemmBackend::unpacked;
  const auto whole = im2col::im2col_layout(large, Pass::forward, asked, 1);
  EXPECT_TRUE(whole.tap_classes);
  EXPECT_EQ(whole.tile, 0);
}

// OpenBLAS's speed depends on the core its DYNAMIC_ARCH build picked for this CPU: a plan on
// it records that core; the other backends record nothing of the kind.
TEST(CpuIm2col, PlanRecordsTheOpenblasCore) {
  const ConvProblem p = testing::problem("mb2ic8ih9oc8kh3ph1");
  for (const im2col::GemmBackend backend :
       {im2col::GemmBackend::openblas, im2col::GemmBackend::unpacked}) {
    if (!im2col::gemm_backend_available(backend)) continue;
    im2col::Im2colOptions options;
    options.backend = backend;
    const auto plan = im2col::CpuIm2col(options).plan(p, Pass::forward);
    const std::map<std::string, std::string> details(plan->info().details.begin(),
                                                     plan->info().details.end());
    const auto runtime = details.find("gemm_runtime");
    if (backend == im2col::GemmBackend::openblas) {
      ASSERT_NE(runtime, details.end());
      EXPECT_EQ(runtime->second.rfind("openblas core ", 0), 0u) << runtime->second;
      EXPECT_GT(runtime->second.size(), std::string("openblas core ").size());
      EXPECT_NE(plan->info().kernel.find(runtime->second), std::string::npos);
    } else {
      EXPECT_EQ(runtime, details.end());
    }
  }
}

// Backward-data with stride 1 runs as dy convolved with the flipped filter: under tap classes,
// and with every tap where the problem pads each side at least as much as that convolution and
// K/g <= C/g (its column buffer no larger) or the implicit form reads that buffer in place.
// Asked for where it cannot run, it is refused with the reason; asked for wherever it runs, it
// is exact on integer data.
TEST(CpuIm2col, TransposedBackwardDataWhereItApplies) {
  using im2col::DataForm;
  set_num_threads(1);
  im2col::Im2colOptions unpacked;
  unpacked.backend = im2col::GemmBackend::unpacked;
  const auto details = [](const Algorithm& algo, const ConvProblem& p) {
    const auto plan = algo.plan(p, Pass::backward_data);
    return std::map<std::string, std::string>(plan->info().details.begin(),
                                              plan->info().details.end());
  };
  const im2col::CpuIm2col automatic(unpacked);
  const ConvProblem same = testing::problem("mb2ic8ih20oc6kh3ph1");
  EXPECT_EQ(details(automatic, same)["bwd_data"], "transposed");
  EXPECT_EQ(details(automatic, same)["taps"], "all, transposed");
  // The masked form reads its own copy of the filter, flipped and its columns reordered; with
  // the column buffer the GEMM reads the flipped filter.
  im2col::Im2colOptions masked_form = unpacked;
  masked_form.columns = im2col::ColumnForm::masked;
  const auto masked = im2col::im2col_layout(same, Pass::backward_data, masked_form, 1);
  EXPECT_TRUE(masked.masked);
  EXPECT_EQ(masked.flipped, 0);
  EXPECT_EQ(masked.ordered, pad16(same.w_elems()));
  im2col::Im2colOptions buffered = unpacked;
  buffered.columns = im2col::ColumnForm::buffer;
  const auto flipped = im2col::im2col_layout(same, Pass::backward_data, buffered, 1);
  EXPECT_EQ(flipped.flipped, pad16(same.w_elems()));
  EXPECT_EQ(flipped.ordered, 0);
  // K/g > C/g: the transposed column buffer would be larger...
  EXPECT_EQ(details(automatic, testing::problem("mb2ic4ih20oc8kh3ph1"))["bwd_data"], "col2im");
  // ...unless the masked or implicit form reads it in place, which auto takes on tiled images
  // (AlexNet's conv2, VGG-16's conv2_1) where the GEMM has 32 rows (C/g) or more (not VGG-16's
  // conv1_1): masked where the GEMM masks its loads natively.
  for (const char* layer : {"mb16ic64ih27oc192kh5ph2", "mb16ic64ih112oc128kh3ph1"}) {
    EXPECT_EQ(details(automatic, testing::problem(layer))["bwd_data"], "transposed") << layer;
    EXPECT_EQ(details(automatic, testing::problem(layer))["columns"],
              auto_masks_here() ? "masked" : "implicit")
        << layer;
  }
  EXPECT_EQ(details(automatic, testing::problem("mb16ic3ih224oc64kh3ph1"))["bwd_data"], "col2im");
  im2col::Im2colOptions buffer = unpacked;
  buffer.columns = im2col::ColumnForm::buffer;
  EXPECT_EQ(details(im2col::CpuIm2col(buffer), testing::problem("mb16ic64ih27oc192kh5ph2"))
                ["bwd_data"],
            "col2im");
  // Unpadded, the transposed convolution pads by 2: col2im, and refused when asked for.
  const ConvProblem unpadded = testing::problem("mb2ic8ih9oc8kh3ph0");
  EXPECT_EQ(details(automatic, unpadded)["bwd_data"], "col2im");
  EXPECT_EQ(details(automatic, testing::problem("mb2ic8ih9oc8kh1"))["bwd_data"],
            "1x1 GEMM into dx");
  im2col::Im2colOptions asked = unpacked;
  asked.bwd_data = DataForm::transposed;
  asked.taps = im2col::TapMode::all;
  const im2col::CpuIm2col transposed(asked);
  const Support refused = transposed.supports(unpadded, Pass::backward_data);
  EXPECT_FALSE(refused);
  EXPECT_NE(refused.reason.find("pads dy by 2/2 rows and 2/2 columns"), std::string::npos)
      << refused.reason;
  EXPECT_THROW(transposed.plan(unpadded, Pass::backward_data), Error);
  EXPECT_TRUE(transposed.supports(unpadded, Pass::forward));  // a backward-data knob only
  const ConvProblem strided = testing::problem("mb2ic8ih9oc8kh3ph1sh2");
  const Support stride = transposed.supports(strided, Pass::backward_data);
  EXPECT_NE(stride.reason.find("stride 2x2"), std::string::npos) << stride.reason;
  // Asked for with K/g > C/g, it runs.
  EXPECT_EQ(details(transposed, testing::problem("mb2ic4ih20oc8kh3ph1"))["bwd_data"],
            "transposed");
  // Under tap classes the unpadded one runs transposed, on exact classes.
  asked.taps = im2col::TapMode::in_image;
  EXPECT_EQ(details(im2col::CpuIm2col(asked), unpadded)["taps"], "in_image, transposed");
  // col2im under tap classes: the adjoint of the forward classes.
  im2col::Im2colOptions adjoint = unpacked;
  adjoint.bwd_data = DataForm::col2im;
  const ConvProblem seven = testing::problem("mb16ic32ih7oc32kh3ph1");
  const auto classes = im2col::im2col_layout(seven, Pass::backward_data, adjoint, 1);
  EXPECT_TRUE(classes.tap_classes);
  EXPECT_FALSE(classes.transposed);
  EXPECT_EQ(classes.flipped, 0);

  // Exact wherever it runs, tiled or whole, by every GEMM backend that runs it.
  const uint64_t seed = run_seed() + 9;
  std::vector<ConvProblem> problems = edge_cases();
  for (ConvProblem p : random_problems(seed, 12)) {
    p.n = 3;
    problems.push_back(p);
  }
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const int64_t tile : {int64_t{0}, int64_t{7}, im2col::kAutoTile}) {
      im2col::Im2colOptions options = asked;
      options.taps = im2col::TapMode::all;
      options.tile = tile;
      const auto summary = check_corpus(im2col::CpuIm2col(options), problems,
                                        {Pass::backward_data}, seed, Fill::integers);
      const std::string label =
          std::to_string(threads) + " threads, bwd_data transposed, tile " +
          (tile == im2col::kAutoTile ? std::string("auto") : std::to_string(tile));
      EXPECT_TRUE(report_corpus("cpu.im2col", label, summary, seed)) << label;
      EXPECT_EQ(summary.failed, 0) << label;
      EXPECT_GT(summary.passed, 0) << label;
    }
  }
  set_num_threads(2);
}

// The channels modes: automatic where images mode would run a share of the products in class
// GEMMs narrower than a vector (the exact corner classes of a 7x7 backward-data at two
// threads), not where that share is small (14x14) or none (forward's merged classes), nor
// with few rows per part; split by input channels in forward and the transposed
// backward-data where there are as many as output rows and each thread gets 64 of them; asked
// for without tap classes, refused with the reason.
TEST(CpuIm2col, ChannelsModeWhereItPays) {
  using im2col::ParallelMode;
  im2col::Im2colOptions unpacked;
  unpacked.backend = im2col::GemmBackend::unpacked;
  const ConvProblem seven = testing::problem("mb16ic128ih7oc128kh3ph1");
  const ConvProblem fourteen = testing::problem("mb16ic128ih14oc128kh3ph1");
  const ConvProblem few_rows = testing::problem("mb16ic32ih7oc32kh3ph1");
  const ConvProblem few_inputs = testing::problem("mb16ic96ih7oc128kh3ph1");  // 48 a thread
  const ConvProblem wide = testing::problem("mb16ic128ih7oc256kh3ph1");
  const auto mode = [&](const ConvProblem& p, Pass pass, int threads) {
    return im2col::im2col_layout(p, pass, unpacked, threads).mode;
  };
  // At 8 images a worker, every 7x7 class is short of its one-thread width; at 14x14 only
  // the edges and the rows (19 % of the products), so images mode keeps those.
  EXPECT_EQ(mode(seven, Pass::backward_data, 2), ParallelMode::in_channels);
  EXPECT_EQ(mode(seven, Pass::forward, 2), ParallelMode::in_channels);
  EXPECT_EQ(mode(few_inputs, Pass::forward, 2), ParallelMode::channels);
  // Fewer input channels than output rows: the partial outputs cost more than the copies save;
  // the transposed backward-data has them the other way round.
  EXPECT_EQ(mode(wide, Pass::forward, 2), ParallelMode::channels);
  EXPECT_EQ(mode(wide, Pass::backward_data, 2), ParallelMode::in_channels);
  // 42 input channels a thread.
  EXPECT_EQ(mode(testing::problem("mb16ic128ih7oc160kh3ph1"), Pass::forward, 3),
            ParallelMode::channels);
  EXPECT_EQ(mode(fourteen, Pass::backward_data, 2), ParallelMode::images);
  EXPECT_EQ(mode(fourteen, Pass::forward, 2), ParallelMode::images);
  EXPECT_EQ(mode(few_rows, Pass::backward_data, 2), ParallelMode::images);
  EXPECT_EQ(mode(seven, Pass::backward_data, 1), ParallelMode::gemm);
  // Backward-filter under tap classes: its workers sum disjoint rows of dW, no partials.
  EXPECT_EQ(mode(seven, Pass::backward_filter, 2), ParallelMode::channels);
  EXPECT_EQ(im2col::im2col_layout(seven, Pass::backward_filter, unpacked, 2).partial, 0);
  EXPECT_GT(im2col::im2col_layout(fourteen, Pass::backward_filter, unpacked, 2).partial, 0);
  // Backward-filter's implicit form (every tap: the 14x14 layer's classes skip too few
  // products there) by input channels where each thread gets 128 of them: each worker pads
  // and sums only its own, so the padded images and dW^T are a worker's share, and there is
  // no partial dW; 128 channels in all stay in images mode.
  const ConvProblem wide_filter = testing::problem("mb16ic256ih14oc192kh3ph1");
  const im2col::Im2colLayout split =
      im2col::im2col_layout(wide_filter, Pass::backward_filter, unpacked, 2);
  EXPECT_TRUE(split.pixel_offsets);
  EXPECT_EQ(split.mode, ParallelMode::channels);
  EXPECT_EQ(split.partial, 0);
  EXPECT_EQ(split.images_per_gemm, 2);     // the one-thread chunks: 256 columns of 196 pixels
  const int64_t grid_plane = 16 * 15 + 1;  // 16 rows of pitch 15 sharing a padding column
  // 43 register tiles of channels: 21 and 22 of them, 126 and 130 channels.
  EXPECT_EQ(split.col, pad16(2 * 130 * grid_plane));
  EXPECT_EQ(split.dw_t, 130 * 9 * 192);
  EXPECT_EQ(mode(fourteen, Pass::backward_filter, 2), ParallelMode::images);
  EXPECT_EQ(mode(wide_filter, Pass::backward_filter, 3), ParallelMode::images);  // 85 a thread
  // Channels past the register tiles (258 = 43 x 6) go to the last part: 126 + 132.
  const ConvProblem odd = testing::problem("mb4ic258ih7oc16kh3ph1");
  im2col::Im2colOptions implicit_channels = unpacked;
  implicit_channels.columns = im2col::ColumnForm::implicit;
  implicit_channels.parallel = ParallelMode::channels;
  const im2col::Im2colLayout odd_split =
      im2col::im2col_layout(odd, Pass::backward_filter, implicit_channels, 2);
  EXPECT_EQ(odd_split.mode, ParallelMode::channels);
  EXPECT_EQ(odd_split.dw_t, 132 * 9 * 16);

  for (const ParallelMode asked_mode : {ParallelMode::channels, ParallelMode::in_channels}) {
    im2col::Im2colOptions options = unpacked;
    options.parallel = asked_mode;
    const im2col::Im2colLayout layout =
        im2col::im2col_layout(seven, Pass::backward_data, options, 2);
    EXPECT_EQ(layout.mode, asked_mode);
    EXPECT_EQ(layout.workers, 2);
    EXPECT_EQ(layout.gemm_threads, 1);
    // Each worker batches the whole batch's images, as one thread does, in buffers of its
    // own; the flipped filter is one for all; split by input channels, the second worker sums
    // into a dx of its own.
    const im2col::Im2colLayout one =
        im2col::im2col_layout(seven, Pass::backward_data, options, 1);
    EXPECT_EQ(one.mode, ParallelMode::gemm);
    EXPECT_EQ(layout.class_images, one.class_images);
    const auto flipped = static_cast<std::size_t>(4 * one.flipped);
    const int64_t partial = asked_mode == ParallelMode::in_channels ? seven.x_elems() : 0;
    EXPECT_EQ(layout.partial, partial);  // already a multiple of 16
    EXPECT_EQ(layout.workspace_bytes - flipped,
              2 * (one.workspace_bytes - flipped) + static_cast<std::size_t>(4 * partial));
    EXPECT_NE(layout.describe().find(std::string("parallel ") + to_string(asked_mode) +
                                     " (2 workers, 2 threads, gemm 1)"),
              std::string::npos)
        << layout.describe();
  }

  im2col::Im2colOptions asked = unpacked;
  asked.parallel = ParallelMode::channels;
  const ConvProblem large = testing::problem("mb2ic8ih56oc8kh3ph1");  // tiled, no classes
  for (Pass pass : all_passes()) {
    EXPECT_FALSE(im2col::CpuIm2col(asked).supports(large, pass));
    try {
      (void)im2col::CpuIm2col(asked).plan(large, pass);
      ADD_FAILURE() << large.descriptor() << " " << to_string(pass) << " planned in channels mode";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unsupported);
      EXPECT_NE(std::string(e.what()).find("parallel=channels"), std::string::npos) << e.what();
    }
  }
  // The input channels' split runs the tap classes' forward GEMMs only: refused without tap
  // classes, in backward-filter, and in the adjoint (strided) backward-data, with the reason.
  asked.parallel = ParallelMode::in_channels;
  const ConvProblem strided = testing::problem("mb4ic64ih7oc64kh3ph1sh2");
  const std::pair<ConvProblem, Pass> refused[] = {{large, Pass::forward},
                                                  {large, Pass::backward_data},
                                                  {seven, Pass::backward_filter},
                                                  {strided, Pass::backward_data}};
  for (const auto& [p, pass] : refused) {
    const Support support = im2col::CpuIm2col(asked).supports(p, pass);
    EXPECT_FALSE(support) << p.descriptor() << " " << to_string(pass);
    EXPECT_NE(support.reason.find("parallel=in_channels on " + p.descriptor()), std::string::npos)
        << support.reason;
  }
  EXPECT_TRUE(im2col::CpuIm2col(asked).supports(strided, Pass::forward));
}

// Split by input channels, every pass it runs is exact on integer data at any thread count
// (each worker's blocks, added in worker order), bitwise the same from run to run at a fixed
// thread count, and stays inside its workspace, partial outputs included; a worker whose
// share of some class is empty (3 channels at 4 threads) still writes its whole output.
TEST(CpuIm2col, InChannelsModeIsExactAndDeterministic) {
  const std::vector<ConvProblem> problems = {
      testing::problem("mb5ic20ih7oc40kh3ph1"), testing::problem("mb3ic3ih9oc7kh3ph1"),
      testing::problem("mb4ic18ih11oc12kh3ph1sh2"), testing::problem("g2mb3ic12ih8oc18kh5ph2"),
      testing::problem("mb2ic6ih6oc9kh3ph2dh1"), testing::problem("mb2ic40ih5oc30kh3ph1")};
  im2col::Im2colOptions options;
  options.backend = im2col::GemmBackend::unpacked;
  options.taps = im2col::TapMode::in_image;
  options.parallel = im2col::ParallelMode::in_channels;
  const im2col::CpuIm2col algo(options);
  const uint64_t seed = run_seed() + 11;
  for (int threads : {1, 2, 3, 4}) {
    set_num_threads(threads);
    const auto summary = check_corpus(algo, problems, all_passes(), seed, Fill::integers);
    const std::string label = std::to_string(threads) + " threads, parallel in_channels";
    EXPECT_TRUE(report_corpus("cpu.im2col", label, summary, seed)) << label;
    // Forward for every problem, backward-data for the five of stride 1.
    EXPECT_EQ(summary.passed, 6 + 5) << label;
    for (const std::string& reason : summary.unsupported_reasons) {
      EXPECT_NE(reason.find("parallel=in_channels"), std::string::npos) << reason;
    }
    for (const ConvProblem& p : problems) {
      for (Pass pass : all_passes()) {
        if (!algo.supports(p, pass)) continue;
        EXPECT_EQ(im2col::im2col_layout(p, pass, options, threads).mode,
                  threads > 1 ? im2col::ParallelMode::in_channels : im2col::ParallelMode::gemm);
        const HostTensors host = make_inputs(p, pass, run_seed());
        auto plan = algo.plan(p, pass);
        const std::vector<float> first = run_within_workspace(*plan, p, pass, host);
        const std::vector<float> again = run_within_workspace(*plan, p, pass, host);
        EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0)
            << p.descriptor() << " " << to_string(pass) << ", " << threads << " threads";
      }
    }
  }
  set_num_threads(2);
}

// Channels mode gives every output element to one thread's dot product, summed as with one
// thread: the bits do not depend on the thread count, in the forward classes, the transposed
// backward-data, the adjoint (strided) one and backward-filter; run() stays inside its
// workspace.
TEST(CpuIm2col, ChannelsModeSameBitsOnAnyThreadCount) {
  const std::vector<ConvProblem> problems = {
      testing::problem("mb5ic20ih7oc40kh3ph1"), testing::problem("mb3ic13ih9oc7kh3ph1"),
      testing::problem("mb4ic18ih11oc12kh3ph1sh2"), testing::problem("g2mb3ic12ih8oc18kh5ph2"),
      testing::problem("mb2ic6ih6oc9kh3ph2dh1")};
  im2col::Im2colOptions options;
  options.backend = im2col::GemmBackend::unpacked;
  options.taps = im2col::TapMode::in_image;
  options.parallel = im2col::ParallelMode::channels;
  for (const ConvProblem& p : problems) {
    for (Pass pass : all_passes()) {
      const HostTensors host = make_inputs(p, pass, run_seed());
      std::vector<float> first;
      for (int threads : {1, 2, 3, 4}) {
        set_num_threads(threads);
        auto plan = im2col::CpuIm2col(options).plan(p, pass);
        const std::vector<float> out = run_within_workspace(*plan, p, pass, host);
        if (threads == 1) {
          first = out;  // against the reference: EverySettingIsExact
          continue;
        }
        ASSERT_EQ(out.size(), first.size());
        EXPECT_EQ(std::memcmp(out.data(), first.data(), out.size() * sizeof(float)), 0)
            << p.descriptor() << " " << to_string(pass) << ": " << threads
            << " threads differ from 1 (" << plan->notes() << ")";
      }
    }
  }
  // Backward-filter's implicit form split by input channels: each worker's rows of dW^T sum
  // the chunks and depth blocks one thread does, so the bits are the column buffer's at one
  // thread, with groups, a stride, dilation, a tile, more workers than register tiles of
  // channels (empty parts) and channels that do not split evenly.
  const std::vector<ConvProblem> filter_problems = {
      testing::problem("mb5ic20ih7oc40kh3ph1"),     testing::problem("mb3ic13ih9oc7kh3ph1"),
      testing::problem("mb4ic18ih11oc12kh3ph1sh2"), testing::problem("g2mb3ic12ih8oc18kh5ph2"),
      testing::problem("mb2ic6ih6oc9kh3ph2dh1"),    testing::problem("mb2ic40ih20oc8kh3ph1")};
  im2col::Im2colOptions buffer;
  buffer.backend = im2col::GemmBackend::unpacked;
  buffer.taps = im2col::TapMode::all;
  buffer.columns = im2col::ColumnForm::buffer;
  for (const ConvProblem& p : filter_problems) {
    const HostTensors host = make_inputs(p, Pass::backward_filter, run_seed());
    for (const int64_t tile : {int64_t{0}, int64_t{64}}) {
      buffer.tile = tile;
      im2col::Im2colOptions split = buffer;
      split.columns = im2col::ColumnForm::implicit;
      split.parallel = im2col::ParallelMode::channels;
      set_num_threads(1);
      auto reference = im2col::CpuIm2col(buffer).plan(p, Pass::backward_filter);
      const std::vector<float> want =
          run_within_workspace(*reference, p, Pass::backward_filter, host);
      for (int threads : {2, 3, 4}) {
        set_num_threads(threads);
        auto plan = im2col::CpuIm2col(split).plan(p, Pass::backward_filter);
        ASSERT_NE(plan->notes().find("parallel channels"), std::string::npos) << plan->notes();
        const std::vector<float> got = run_within_workspace(*plan, p, Pass::backward_filter, host);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
            << p.descriptor() << " tile " << tile << ": " << threads
            << " threads differ from the column buffer's one (" << plan->notes() << ")";
      }
    }
  }
  set_num_threads(2);
}

// A tile shrinks the declared workspace to a (C/g*R*S) x tile column buffer, the plan
// records the tile, and run() touches exactly what it declares (the memory-honesty check:
// the bytes measured as written equal the bytes declared).
TEST(CpuIm2col, TileShrinksTheWorkspaceRunUses) {
  set_num_threads(1);
  const ConvProblem p = testing::problem("mb2ic8ih20oc6kh3ph1");  // 400 pixels, rows 72
  im2col::Im2colOptions whole_options, tiled_options;
  whole_options.images_per_gemm = 1;
  whole_options.backend = tiled_options.backend = im2col::GemmBackend::openblas;
  if (!im2col::gemm_backend_available(im2col::GemmBackend::openblas)) {
    whole_options.backend = tiled_options.backend = im2col::default_gemm_backend();
  }
  tiled_options.tile = 64;
  for (Pass pass : all_passes()) {
    const auto whole = im2col::CpuIm2col(whole_options).plan(p, pass);
    const auto tiled = im2col::CpuIm2col(tiled_options).plan(p, pass);
    EXPECT_LT(tiled->workspace_bytes(), whole->workspace_bytes()) << to_string(pass);
    const im2col::Im2colLayout layout = im2col::im2col_layout(p, pass, tiled_options, 1);
    // Backward-data runs transposed: dy's 6 channels by 9 taps.
    EXPECT_EQ(layout.col, (pass == Pass::backward_data ? 54 : 72) * 64)
        << to_string(pass);  // already a multiple of 16
    EXPECT_EQ(tiled->workspace_bytes(), layout.workspace_bytes);
    EXPECT_EQ(tiled->info().tile, "64 pixels");
    EXPECT_EQ(whole->info().tile, "");
    EXPECT_NE(tiled->notes().find("tile 64 pixels"), std::string::npos) << tiled->notes();

    // Every byte of the declared column buffer is written (a pattern no float here equals
    // survives nowhere in it) and nothing past the workspace is.
    const std::size_t ws = tiled->workspace_bytes(), guard = 4096;
    const HostTensors host = make_inputs(p, pass, run_seed());
    CaseBuffers buffers(host_context(), p, host, ws + guard);
    auto* bytes = static_cast<unsigned char*>(buffers.workspace().data);
    std::memset(bytes, 0x7F, ws + guard);
    tiled->run(buffers.tensors(), {bytes, ws});
    const std::size_t col_bytes = 4 * static_cast<std::size_t>(layout.col);
    std::size_t untouched = 0;
    for (std::size_t i = 0; i + 4 <= col_bytes; i += 4) {
      if (std::memcmp(bytes + i, "\x7F\x7F\x7F\x7F", 4) == 0) ++untouched;
    }
    EXPECT_EQ(untouched, 0u) << to_string(pass) << ": declared column floats never written";
    for (std::size_t i = ws; i < ws + guard; ++i) {
      ASSERT_EQ(bytes[i], 0x7F) << to_string(pass) << ": wrote past the workspace at " << i;
    }
  }
  set_num_threads(2);
}

TEST(CpuIm2col, RunAllocatesNothing) {
  set_num_threads(2);
  ConvProblem p;
  p.n = 4, p.c = 16, p.h = 16, p.w = 16, p.k = 16, p.r = 3, p.s = 3, p.pad_h = p.pad_w = 1;
  im2col::Im2colOptions options;
  options.images_per_gemm = 2;
  options.parallel = im2col::ParallelMode::images;
  const im2col::CpuIm2col batched(options);
  // The unpacked GEMM in gemm mode: two threads on its columns, backward-filter's
  // transposed B in the workspace.
  im2col::Im2colOptions unpacked_options;
  unpacked_options.backend = im2col::GemmBackend::unpacked;
  unpacked_options.parallel = im2col::ParallelMode::gemm;
  const im2col::CpuIm2col unpacked(unpacked_options);
  for (const Algorithm* algo : {&algorithm(), static_cast<const Algorithm*>(&batched),
                                static_cast<const Algorithm*>(&unpacked)}) {
    for (Pass pass : all_passes()) {
      auto plan = algo->plan(p, pass);
      const HostTensors host = make_inputs(p, pass, 1);
      CaseBuffers buffers(host_context(), p, host, plan->workspace_bytes());
      plan->run(buffers.tensors(), buffers.workspace());  // warm the thread pools
      g_allocations = 0;
      g_counting = true;
      plan->run(buffers.tensors(), buffers.workspace());
      g_counting = false;
      EXPECT_EQ(g_allocations.load(), 0) << to_string(pass) << " " << plan->notes();
    }
  }
}

TEST(CpuIm2col, PointwiseShortcutNeedsNoColumnBuffer) {
  set_num_threads(1);
  ConvProblem p;
  p.n = 3, p.c = 6, p.h = 5, p.w = 7, p.k = 4, p.r = 1, p.s = 1, p.groups = 2;
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    auto plan = algorithm().plan(p, pass);
    // Nothing but the GEMM library's packing buffers (Eigen's; none for OpenBLAS).
    const im2col::Im2colLayout layout =
        im2col::im2col_layout(p, pass, im2col::Im2colOptions{}, num_threads());
    EXPECT_EQ(layout.col + layout.stage, 0) << to_string(pass);
    // Backward-filter sums dWᵀ (3 input channels against 2 output ones) in a buffer of its own.
    EXPECT_EQ(layout.dw_t, pass == Pass::backward_filter ? 16 * ((p.w_elems() + 15) / 16) : 0);
    EXPECT_EQ(plan->workspace_bytes(), static_cast<std::size_t>(4 * (layout.gemm + layout.dw_t)))
        << to_string(pass);
    EXPECT_NE(plan->notes().find("1x1 shortcut"), std::string::npos) << plan->notes();
  }
  set_num_threads(2);
}

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

TEST(CpuIm2col, SettingsFromTheEnvironment) {
  set_num_threads(2);
  ConvProblem p;
  p.n = 8, p.c = 4, p.h = 9, p.w = 9, p.k = 4, p.r = 3, p.s = 3;
  {
    ScopedEnv env("CONVLAB_IM2COL_IMAGES_PER_GEMM", "3");
    ScopedEnv mode("CONVLAB_IM2COL_PARALLEL", "gemm");
    const std::string notes = algorithm().plan(p, Pass::forward)->notes();
    EXPECT_NE(notes.find("3 images per GEMM"), std::string::npos) << notes;
    EXPECT_NE(notes.find("parallel gemm"), std::string::npos) << notes;
  }
  {
    ScopedEnv env("CONVLAB_IM2COL_IMAGES_PER_GEMM", "three");
    try {
      algorithm().plan(p, Pass::forward);
      ADD_FAILURE() << "a malformed CONVLAB_IM2COL_IMAGES_PER_GEMM was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("three"), std::string::npos) << e.what();
    }
  }
  {
    ScopedEnv env("CONVLAB_IM2COL_PARALLEL", "both");
    EXPECT_THROW(algorithm().plan(p, Pass::forward), Error);
  }
}

TEST(CpuIm2col, RunRejectsMissingTensors) {
  ConvProblem p;
  p.n = 1, p.c = 2, p.h = 5, p.w = 5, p.k = 2, p.r = 3, p.s = 3;
  auto plan = algorithm().plan(p, Pass::forward);
  DeviceBuffer ws(host_context(), plan->workspace_bytes());
  try {
    plan->run(Tensors{}, {ws.data(), ws.bytes()});
    ADD_FAILURE() << "null tensors accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
}

}  // namespace
}  // namespace convlab
