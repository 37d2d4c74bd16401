// cpu.fft against the reference over the whole corpus, all three passes, plus the pieces
// that the corpus cannot isolate: each instruction set of the bin GEMM, determinism,
// workspace checks and the planner setting.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "support/conv_tester.hpp"
#include "convlab/convlab.hpp"
#include "cpu/fft/bin_gemm.hpp"
#include "cpu/fft/fft_plan.hpp"
#include "strategy/fft_geometry.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::check_corpus;
using testing::report_corpus;
using testing::run_seed;

const Algorithm& fft() { return registry().get("cpu.fft"); }

ConvProblem make(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s,
                 int64_t pad = 0, int64_t stride = 1, int64_t dilation = 1, int64_t groups = 1) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
  p.pad_h = p.pad_w = pad, p.stride_h = p.stride_w = stride;
  p.dilation_h = p.dilation_w = dilation, p.groups = groups;
  p.validate();
  return p;
}

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? (void)setenv(name_, old_.c_str(), 1) : (void)unsetenv(name_); }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

class CpuFft : public ::testing::Test {
 protected:
  // The corpus plans hundreds of shapes: FFTW_ESTIMATE keeps planning to microseconds
  // (the measure planner is tested on its own below). Two threads, as on CI.
  void SetUp() override {
    set_num_threads(2);
    if (!std::getenv("CONVLAB_FFTW_PLANNER")) planner_ = std::make_unique<ScopedEnv>(
        "CONVLAB_FFTW_PLANNER", "estimate");
  }
  std::unique_ptr<ScopedEnv> planner_;
};

TEST_F(CpuFft, EdgeCases) {
  const uint64_t seed = run_seed();
  const auto summary = check_corpus(fft(), testing::edge_cases(), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.fft", "edge cases", summary, seed));
  EXPECT_EQ(summary.unsupported, 0);
}

TEST_F(CpuFft, ScaledSuiteLayers) {
  const uint64_t seed = run_seed();
  const auto layers = testing::scaled_suite_layers();
  std::cout << "cpu.fft: " << layers.size() << " scaled-down suite layers\n";
  const auto summary = check_corpus(fft(), layers, all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.fft", "suite layers", summary, seed));
  EXPECT_EQ(summary.unsupported, 0);
}

TEST_F(CpuFft, RandomProblems) {
  const uint64_t seed = run_seed();
  const auto summary =
      check_corpus(fft(), testing::random_problems(seed, 300), all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.fft", "random problems", summary, seed));
  EXPECT_EQ(summary.unsupported, 0);
}

}  // namespace
}  // namespace convlab

namespace convlab {
namespace {

// Each instruction set's bin GEMM against a plain complex loop, every conjugation mode,
// tile remainders (m, n not multiples of the register tile) and groups.
TEST(CpuFftBinGemm, EveryIsaMatchesPlainLoops) {
  using cpu_fft::BinGemmIsa;
  std::mt19937 rng(static_cast<unsigned>(run_seed()));
  std::uniform_real_distribution<float> u(-1, 1);
  int tested = 0;
  for (BinGemmIsa isa : {BinGemmIsa::generic, BinGemmIsa::avx2, BinGemmIsa::avx512}) {
    if (!cpu_fft::bin_gemm_isa_supported(isa)) {
      std::cout << "bin GEMM " << cpu_fft::to_string(isa) << ": not supported here, skipped\n";
      continue;
    }
    for (const ConvProblem& p : {make(3, 5, 6, 7, 7, 3, 2), make(2, 6, 5, 5, 9, 2, 2, 0, 1, 1, 3),
                                 make(1, 1, 4, 4, 1, 1, 1), make(5, 8, 3, 6, 12, 1, 3, 0, 1, 1, 4)}) {
      for (Pass pass : all_passes()) {
        FftGeometryOptions o;
        o.layout = FftSpectrumLayout::plane_major;
        o.bin_multiple = 8;
        const FftGeometry g = fft_geometry(p, pass, o);
        const int64_t ps = g.plane_stride;
        std::vector<float> spectra[3];
        for (FftTensor t : {FftTensor::x, FftTensor::w, FftTensor::y}) {
          auto& v = spectra[static_cast<int>(t)];
          v.resize(static_cast<size_t>(2 * fft_planes(g, t) * ps));
          for (float& e : v) e = u(rng);
        }
        const FftGemm& m = g.gemm;
        auto& out = spectra[static_cast<int>(m.out.tensor)];
        std::fill(out.begin(), out.end(), std::nanf(""));
        cpu_fft::BinGemmArgs args{spectra[static_cast<int>(m.a.tensor)].data(),
                                  spectra[static_cast<int>(m.b.tensor)].data(), out.data(), ps,
                                  m};
        cpu_fft::bin_gemm(isa, args, 0, ps);
        using cf = std::complex<double>;
        auto at = [&](const FftOperand& op, int64_t grp, int64_t i, int64_t j, int64_t bin) {
          const auto& v = spectra[static_cast<int>(op.tensor)];
          const size_t k = static_cast<size_t>(2 * (fft_operand_plane(op, grp, i, j) * ps + bin));
          const cf z(v[k], v[k + 1]);
          return op.conj ? std::conj(z) : z;
        };
        for (int64_t grp = 0; grp < m.groups; ++grp)
          for (int64_t i = 0; i < m.m; ++i)
            for (int64_t j = 0; j < m.n; ++j)
              for (int64_t bin = 0; bin < ps; ++bin) {
                cf want = 0;
                double mag = 0;
                for (int64_t l = 0; l < m.l; ++l) {
                  want += at(m.a, grp, i, l, bin) * at(m.b, grp, l, j, bin);
                  mag += std::abs(at(m.a, grp, i, l, bin)) * std::abs(at(m.b, grp, l, j, bin));
                }
                FftOperand o_plain = m.out;
                const cf got = at(o_plain, grp, i, j, bin);
                ASSERT_LE(std::abs(got - want), 4 * m.l * 6e-8 * mag + 1e-30)
                    << cpu_fft::to_string(isa) << " " << p.descriptor() << " "
                    << to_string(pass) << " (" << grp << "," << i << "," << j << ") bin " << bin;
              }
        ++tested;
      }
    }
  }
  EXPECT_GE(tested, 12);
}

// The whole algorithm with each instruction set the CPU runs (the default picks the best).
TEST_F(CpuFft, EveryIsaOnTheEdgeCases) {
  const uint64_t seed = run_seed();
  using cpu_fft::BinGemmIsa;
  for (BinGemmIsa kind : {BinGemmIsa::generic, BinGemmIsa::avx2, BinGemmIsa::avx512}) {
    const char* isa = cpu_fft::to_string(kind);
    if (!cpu_fft::bin_gemm_isa_supported(kind)) {
      std::cout << "cpu.fft with " << isa << ": not supported here, skipped\n";
      continue;
    }
    ScopedEnv env("CONVLAB_FFT_ISA", isa);
    const auto summary = check_corpus(fft(), testing::edge_cases(), all_passes(), seed);
    EXPECT_TRUE(report_corpus(std::string("cpu.fft (") + isa + ")", "edge cases", summary, seed));
  }
  ScopedEnv bad("CONVLAB_FFT_ISA", "sse9");
  EXPECT_THROW(fft().plan(make(1, 1, 4, 4, 1, 3, 3), Pass::forward), Error);
}

std::vector<float> run_once(Plan& plan, const ConvProblem& p, Pass pass, const HostTensors& h) {
  CaseBuffers buffers(fft().context(), p, h, plan.workspace_bytes());
  plan.run(buffers.tensors(), buffers.workspace());
  return buffers.download_output(pass);
}

// Bitwise reproducible: the same plan twice, and plans for 1 and 2 threads (the work of
// each output never depends on which thread does it).
TEST_F(CpuFft, Deterministic) {
  EXPECT_TRUE(fft().deterministic());
  for (const ConvProblem& p : {make(3, 6, 19, 17, 10, 5, 4, 2, 2, 1, 2), make(4, 20, 21, 21, 12, 3, 3, 1)}) {
    for (Pass pass : all_passes()) {
      const HostTensors h = make_inputs(p, pass, run_seed());
      set_num_threads(2);
      auto plan2 = fft().plan(p, pass);
      const auto first = run_once(*plan2, p, pass, h);
      const auto again = run_once(*plan2, p, pass, h);
      set_num_threads(1);
      auto plan1 = fft().plan(p, pass);
      const auto single = run_once(*plan1, p, pass, h);
      set_num_threads(2);
      ASSERT_EQ(first.size(), single.size());
      EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * 4)) << p.descriptor();
      EXPECT_EQ(0, std::memcmp(first.data(), single.data(), first.size() * 4)) << p.descriptor();
    }
  }
}

TEST_F(CpuFft, WorkspaceIsTheGeometryAndIsChecked) {
  const ConvProblem p = make(2, 3, 12, 10, 4, 3, 3, 1);
  for (Pass pass : all_passes()) {
    auto plan = fft().plan(p, pass);
    const FftGeometry g = cpu_fft::cpu_fft_geometry(p, pass, num_threads());
    EXPECT_EQ(plan->workspace_bytes(), static_cast<size_t>(g.total_bytes));
    EXPECT_EQ(g.staging_planes, 8 * num_threads());
    EXPECT_EQ(g.total_bytes, (g.spectra_y.offset + g.spectra_y.bytes + 255) / 256 * 256 +
                                 g.staging.bytes);
    const std::string size = std::to_string(g.h.size) + "x" + std::to_string(g.w.size);
    EXPECT_EQ(size, "14x12");  // needed 13x11: (O-1) + R - P = 11 + 3 - 1 = 13
    EXPECT_EQ(plan->info().transform, "fft " + size) << plan->notes();
    const HostTensors h = make_inputs(p, pass, 7);
    CaseBuffers buffers(fft().context(), p, h, plan->workspace_bytes() + 64);
    Workspace ws = buffers.workspace();
    Workspace small{ws.data, plan->workspace_bytes() - 1};
    EXPECT_THROW(plan->run(buffers.tensors(), small), Error);
    Workspace shifted{static_cast<char*>(ws.data) + 4, plan->workspace_bytes()};
    try {
      plan->run(buffers.tensors(), shifted);
      ADD_FAILURE() << "a misaligned workspace was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
    }
    const ErrorBound bound = fft().error_bound(p, pass);
    EXPECT_EQ(bound.kind, ErrorBound::Kind::normwise);
    EXPECT_DOUBLE_EQ(bound.log2_size, std::log2(14.0 * 12.0));
  }
}

// The measure planner (the default) on a few shapes, and a bad planner name.
TEST(CpuFftPlanner, MeasureAndBadName) {
  set_num_threads(2);
  {
    ScopedEnv env("CONVLAB_FFTW_PLANNER", "measure");
    const uint64_t seed = run_seed();
    const std::vector<ConvProblem> problems = {make(2, 4, 16, 16, 4, 5, 5, 2),
                                               make(1, 3, 21, 14, 2, 3, 3, 1, 2, 2)};
    const auto summary = check_corpus(fft(), problems, all_passes(), seed);
    EXPECT_TRUE(report_corpus("cpu.fft (measure)", "a few shapes", summary, seed));
    EXPECT_NE(fft().plan(problems[0], Pass::forward)->notes().find("measure"), std::string::npos);
  }
  ScopedEnv env("CONVLAB_FFTW_PLANNER", "thorough");
  try {
    fft().plan(make(1, 1, 4, 4, 1, 3, 3), Pass::forward);
    ADD_FAILURE() << "a bad planner name was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("thorough"), std::string::npos);
  }
}

// The bound must be one that can fail: the worst error over the random corpus, as a
// fraction of the bound, is printed and must not be vanishingly small.
TEST_F(CpuFft, BoundIsTight) {
  const uint64_t seed = run_seed();
  double worst = 0;
  std::string where;
  uint64_t case_seed = seed;
  for (const ConvProblem& p : testing::random_problems(seed ^ 0x5eed, 100)) {
    for (Pass pass : all_passes()) {
      const auto outcome = testing::check_case(fft(), p, pass, case_seed++);
      ASSERT_EQ(outcome.disposition, testing::Disposition::passed) << outcome.message;
      if (outcome.report.worst_ratio > worst) {
        worst = outcome.report.worst_ratio;
        where = p.descriptor() + " " + to_string(pass);
      }
    }
  }
  std::cout << "cpu.fft: worst error/bound over 300 random cases " << worst << " (" << where
            << ", seed " << seed << ")\n";
  EXPECT_GT(worst, 0.02);
}

}  // namespace
}  // namespace convlab
