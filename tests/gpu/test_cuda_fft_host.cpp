// Host-side checks of cuda.fft's mapping of fft_geometry.hpp onto cuBLAS and cuFFT, run
// without a GPU: the column-major strided-batched CGEMM of fft_cgemm.hpp, replayed here by a
// plain loop with cuBLAS's semantics, must compute exactly FftGemm's product for every pass
// over the corpus (every output element written once, no read outside the spectra), and the
// transform rank/bins of fft_transform.hpp must cover the degenerate planes.
#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <string>
#include <vector>

#include "cuda/fft/fft_cgemm.hpp"
#include "cuda/fft/fft_options.hpp"
#include "cuda/fft/fft_transform.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using Complex = std::complex<double>;
using cuda::CgemmCall;
using cuda::CgemmOperand;

constexpr int64_t kBins = 2;  // two bins: the batch stride is exercised too

// Element (r, c) of op(X) for a column-major X with leading dimension ld, as cuBLAS reads it.
Complex read(const std::vector<Complex>& data, int64_t base, const CgemmOperand& o, int64_t r,
             int64_t c, int64_t planes) {
  const int64_t index = o.op == 'N' ? r + c * o.ld : c + r * o.ld;
  EXPECT_GE(index, 0);
  EXPECT_LT(index + (base % planes), planes) << "read beyond one bin's planes";
  const Complex v = data.at(static_cast<size_t>(base + index));
  return o.op == 'C' ? std::conj(v) : v;
}

struct Spectra {
  std::vector<Complex> x, w, y;
  std::vector<Complex>& of(FftTensor t) {
    return t == FftTensor::x ? x : t == FftTensor::w ? w : y;
  }
};

void check_pass(const ConvProblem& p, Pass pass, std::mt19937_64& rng) {
  const FftGeometry g = fft_geometry(p, pass);
  CgemmCall call;
  try {
    call = cuda::fft_cgemm_call(g);
  } catch (const Error& e) {
    FAIL() << p.descriptor() << " " << to_string(pass) << ": " << e.what();
  }
  std::uniform_real_distribution<double> u(-1, 1);
  Spectra in;
  for (FftTensor t : {FftTensor::x, FftTensor::w, FftTensor::y}) {
    in.of(t).resize(static_cast<size_t>(fft_planes(g, t) * kBins));
    for (Complex& v : in.of(t)) v = {u(rng), u(rng)};
  }
  const FftGemm& f = g.gemm;
  const int64_t out_planes = fft_planes(g, f.out.tensor);
  // FftGemm's definition.
  std::vector<Complex> expected(static_cast<size_t>(out_planes * kBins), Complex(NAN, NAN));
  for (int64_t b = 0; b < kBins; ++b)
    for (int64_t gr = 0; gr < f.groups; ++gr)
      for (int64_t i = 0; i < f.m; ++i)
        for (int64_t j = 0; j < f.n; ++j) {
          Complex sum = 0;
          for (int64_t l = 0; l < f.l; ++l) {
            Complex a =
                in.of(f.a.tensor)[b * fft_planes(g, f.a.tensor) + fft_operand_plane(f.a, gr, i, l)];
            Complex c =
                in.of(f.b.tensor)[b * fft_planes(g, f.b.tensor) + fft_operand_plane(f.b, gr, l, j)];
            sum += (f.a.conj ? std::conj(a) : a) * (f.b.conj ? std::conj(c) : c);
          }
          expected[b * out_planes + fft_operand_plane(f.out, gr, i, j)] = sum;
        }
  // The cuBLAS call, replayed: per group, per bin, C = op(A) op(B) column-major.
  std::vector<Complex> got(expected.size(), Complex(NAN, NAN));
  std::vector<int> writes(expected.size(), 0);
  for (int64_t gr = 0; gr < call.groups; ++gr)
    for (int64_t b = 0; b < kBins; ++b) {
      const int64_t a0 = b * call.a.stride + gr * call.a.per_group;
      const int64_t b0 = b * call.b.stride + gr * call.b.per_group;
      const int64_t c0 = b * call.c.stride + gr * call.c.per_group;
      for (int64_t r = 0; r < call.m; ++r)
        for (int64_t c = 0; c < call.n; ++c) {
          Complex sum = 0;
          for (int64_t k = 0; k < call.k; ++k) {
            sum += read(in.of(call.a.tensor), a0, call.a, r, k, fft_planes(g, call.a.tensor)) *
                   read(in.of(call.b.tensor), b0, call.b, k, c, fft_planes(g, call.b.tensor));
          }
          const int64_t index = c0 + r + c * call.c.ld;
          ASSERT_LT(index, static_cast<int64_t>(got.size()));
          got[static_cast<size_t>(index)] = sum;
          ++writes[static_cast<size_t>(index)];
        }
    }
  for (size_t e = 0; e < got.size(); ++e) {
    ASSERT_EQ(writes[e], 1) << p.descriptor() << " " << to_string(pass) << " element " << e;
    ASSERT_LT(std::abs(got[e] - expected[e]), 1e-12) << p.descriptor() << " " << to_string(pass);
  }
}

TEST(CudaFftCgemm, MatchesFftGemmOverTheCorpus) {
  const uint64_t seed = testing::run_seed();
  std::mt19937_64 rng(seed);
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::random_problems(seed, 100)) problems.push_back(p);
  for (const ConvProblem& p : problems) {
    for (Pass pass : testing::all_passes()) {
      check_pass(p, pass, rng);
      if (::testing::Test::HasFatalFailure()) {
        FAIL() << "seed " << seed << " (CONVLAB_TEST_SEED)";
      }
    }
  }
}

TEST(CudaFftCgemm, RefusesPlaneMajor) {
  ConvProblem p;
  p.n = 1, p.c = 2, p.h = 5, p.w = 5, p.k = 2, p.r = 3, p.s = 3;
  FftGeometryOptions o;
  o.layout = FftSpectrumLayout::plane_major;
  EXPECT_THROW(cuda::fft_cgemm_call(fft_geometry(p, Pass::forward, o)), Error);
}

TEST(CudaFftTransform, RankAndBins) {
  ConvProblem p;
  p.n = 1, p.c = 1, p.k = 1;
  p.h = 8, p.w = 8, p.r = 3, p.s = 3;
  FftGeometry g = fft_geometry(p, Pass::forward);
  cuda::FftTransform t = cuda::fft_transform(g);
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.bins, g.bins);
  EXPECT_EQ(t.real_plane, g.h.size * g.w.size);
  p.w = 1, p.s = 1;  // a column: Wf = 1, half of the H bins
  g = fft_geometry(p, Pass::forward);
  t = cuda::fft_transform(g);
  ASSERT_EQ(g.w.size, 1);
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.n[0], g.h.size);
  EXPECT_EQ(t.bins, g.h.size / 2 + 1);
  EXPECT_LE(t.bins, g.bins);
  p.h = 1, p.r = 1, p.w = 9, p.s = 4;  // a row: Hf = 1
  g = fft_geometry(p, Pass::backward_data);
  t = cuda::fft_transform(g);
  ASSERT_EQ(g.h.size, 1);
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.bins, g.bins);
  p.w = 1, p.s = 1;  // 1x1 everything
  g = fft_geometry(p, Pass::backward_filter);
  t = cuda::fft_transform(g);
  EXPECT_EQ(t.rank, 0);
  EXPECT_EQ(t.bins, 1);
}

// The complex side of every transform: frequency-major through the strides (strided) or each
// plane's bins one after another (contiguous), the real side the same in both.
TEST(CudaFftTransform, StridedAndContiguousLayouts) {
  ConvProblem p;
  p.n = 2, p.c = 3, p.k = 4, p.h = 9, p.w = 7, p.r = 3, p.s = 2;
  const FftGeometry g = fft_geometry(p, Pass::forward);
  const cuda::FftTransform t = cuda::fft_transform(g);
  const int64_t planes = g.x_planes;
  for (bool forward : {true, false}) {
    const cuda::CufftLayout s = cuda::cufft_layout(t, planes, forward);
    const cuda::CufftLayout c = cuda::cufft_layout(t, planes, forward, true);
    const long long real_stride = 1, real_dist = g.h.size * g.w.size;
    EXPECT_EQ(forward ? s.istride : s.ostride, real_stride);
    EXPECT_EQ(forward ? c.istride : c.ostride, real_stride);
    EXPECT_EQ(forward ? s.idist : s.odist, real_dist);
    EXPECT_EQ(forward ? c.idist : c.odist, real_dist);
    EXPECT_EQ(forward ? s.ostride : s.istride, planes);  // bin b of plane p at b*planes + p
    EXPECT_EQ(forward ? s.odist : s.idist, 1);
    EXPECT_EQ(forward ? c.ostride : c.istride, 1);  // at p*bins + b
    EXPECT_EQ(forward ? c.odist : c.idist, t.bins);
    EXPECT_EQ(t.bins, g.h.size * (g.w.size / 2 + 1));
  }
}

TEST(CudaFftOptions, KnobValuesAreParsedOrRefusedByName) {
  EXPECT_EQ(cuda::fft_crop_from("separate"), cuda::FftCrop::separate);
  EXPECT_EQ(cuda::fft_crop_from("fused"), cuda::FftCrop::fused);
  EXPECT_EQ(cuda::fft_batch_layout_from("strided"), cuda::FftBatchLayout::strided);
  EXPECT_EQ(cuda::fft_batch_layout_from("contiguous"), cuda::FftBatchLayout::contiguous);
  for (const char* bad : {"", "Fused", "callback"}) {
    try {
      cuda::fft_crop_from(bad);
      ADD_FAILURE() << "crop '" << bad << "' accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos);
    }
  }
  EXPECT_THROW(cuda::fft_batch_layout_from("plane_major"), Error);
  // The defaults are the behaviour before the knobs existed.
  const cuda::CudaFftOptions defaults;
  EXPECT_EQ(defaults.crop, cuda::FftCrop::separate);
  EXPECT_EQ(defaults.layout, cuda::FftBatchLayout::strided);
}

}  // namespace
}  // namespace convlab
