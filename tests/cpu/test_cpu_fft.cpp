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
using testing::problem;
using testing::report_corpus;
using testing::run_seed;

const Algorithm& fft() { return registry().get("cpu.fft"); }

// Sets an environment variable for the scope of a test (only the test of knob defaults).
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
  // The default planner, estimate, keeps planning the corpus's hundreds of shapes to
  // microseconds (the measure planner is tested on its own below). Two threads, as on CI.
  void SetUp() override { set_num_threads(2); }
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
  std::mt19937 rng(static_cast<unsigned>(run_seed()));
  std::uniform_real_distribution<float> u(-1, 1);
  int tested = 0;
  for (CpuIsa isa : {CpuIsa::generic, CpuIsa::avx2, CpuIsa::avx512}) {
    if (!cpu_isa_supported(isa)) {
      std::cout << "bin GEMM " << to_string(isa) << ": not supported here, skipped\n";
      continue;
    }
    for (const char* descriptor : {"mb3ic5ih6iw7oc7kh3kw2", "g3mb2ic6ih5oc9kh2", "mb1ic1ih4oc1kh1",
                                   "g4mb5ic8ih3iw6oc12kh1kw3"}) {
      const ConvProblem p = problem(descriptor);
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
                    << to_string(isa) << " " << p.descriptor() << " "
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
  for (CpuIsa kind : {CpuIsa::generic, CpuIsa::avx2, CpuIsa::avx512}) {
    const char* isa = to_string(kind);
    if (!cpu_isa_supported(kind)) {
      std::cout << "cpu.fft with " << isa << ": not supported here, skipped\n";
      continue;
    }
    const auto summary = check_corpus(fft(), testing::edge_cases(), all_passes(), seed,
                                      Fill::uniform, {{"isa", isa}});
    EXPECT_TRUE(report_corpus(std::string("cpu.fft (") + isa + ")", "edge cases", summary, seed));
    const auto plan = fft().plan(problem("mb1ic1ih4oc1kh3"), Pass::forward, {{"isa", isa}});
    EXPECT_EQ(plan->info().knobs.at("isa"), isa);
    EXPECT_NE(plan->info().kernel.find(std::string("bin gemm ") + isa), std::string::npos)
        << plan->info().kernel;
  }
  try {
    fft().plan(problem("mb1ic1ih4oc1kh3"), Pass::forward, {{"isa", "sse9"}});
    ADD_FAILURE() << "an unknown instruction set was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("cpu.fft.isa"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sse9"), std::string::npos) << e.what();
  }
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
  for (const char* descriptor : {"g2mb3ic6ih19iw17oc10kh5kw4sh2sw2ph2pw2", "mb4ic20ih21oc12kh3ph1"}) {
    const ConvProblem p = problem(descriptor);
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
  const ConvProblem p = problem("mb2ic3ih12iw10oc4kh3kw3ph1pw1");
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
    const ErrorBound bound = plan->error_bound();
    EXPECT_EQ(bound.kind, ErrorBound::Kind::normwise);
    EXPECT_DOUBLE_EQ(bound.log2_size, std::log2(14.0 * 12.0));
  }
}

// The measure planner on a few shapes, a bad planner name, and the default (estimate, the
// reproducible one) unless the documented environment variable supplies another, which the
// plan then records like any knob.
TEST(CpuFftPlanner, MeasureBadNameAndEnvironmentDefault) {
  set_num_threads(2);
  EXPECT_EQ(fft().plan(problem("mb1ic1ih4oc1kh3"), Pass::forward)->info().knobs.at("planner"),
            environment_default("CONVLAB_FFTW_PLANNER").value_or("estimate"));
  {
    const uint64_t seed = run_seed();
    const std::vector<ConvProblem> problems = {
        problem("mb2ic4ih16oc4kh5ph2"), problem("mb1ic3ih21iw14oc2kh3kw3sh2sw2ph1pw1dh1dw1")};
    const KnobValues measure = {{"planner", "measure"}};
    const auto summary = check_corpus(fft(), problems, all_passes(), seed, Fill::uniform, measure);
    EXPECT_TRUE(report_corpus("cpu.fft (measure)", "a few shapes", summary, seed));
    const auto plan = fft().plan(problems[0], Pass::forward, measure);
    EXPECT_NE(plan->notes().find("measure"), std::string::npos);
    EXPECT_EQ(plan->info().knobs.at("planner"), "measure");
  }
  try {
    fft().plan(problem("mb1ic1ih4oc1kh3"), Pass::forward, {{"planner", "thorough"}});
    ADD_FAILURE() << "a bad planner name was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("thorough"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cpu.fft.planner"), std::string::npos) << e.what();
  }
  {
    ScopedEnv env("CONVLAB_FFTW_PLANNER", "patient");
    EXPECT_EQ(fft().plan(problem("mb1ic1ih4oc1kh3"), Pass::forward)->info().knobs.at("planner"),
              "patient");
    bool recorded = false;
    for (const auto& [name, value] : environment_defaults_used()) {
      recorded |= name == "CONVLAB_FFTW_PLANNER" && value == "patient";
    }
    EXPECT_TRUE(recorded) << "an environment default was used but not recorded";
  }
  {
    ScopedEnv env("CONVLAB_FFTW_PLANNER", "thorough");
    try {
      fft().plan(problem("mb1ic1ih4oc1kh3"), Pass::forward);
      ADD_FAILURE() << "a bad environment default was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("CONVLAB_FFTW_PLANNER"), std::string::npos)
          << e.what();
    }
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
