// The division-free index math of the cuda.* staging kernels against the plain-division
// functions of lib/strategy that the CPU strategies use, element by element over the test
// corpus: im2col_gather and col2im_gather (the same values, bit for bit, and col2im writes
// each dx element exactly once), and fft_element_at with the step as a divider (the same
// element for every slot of every placement), and cuda.fft's fused staging (fft_staging.hpp:
// its layout leaves room for both inputs on aligned regions, and the one gather over both
// writes, float for float, what the separate placement of each input writes, and nothing in
// the gap). Host only: the kernels call these very functions. The passes run end to end
// with either staging in CudaFftEmulated.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cuda/fft/fft_kernels.hpp"
#include "cuda/fft/fft_passes.hpp"
#include "cuda/im2col/im2col_kernels.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

std::vector<ConvProblem> corpus() {
  std::vector<ConvProblem> list = testing::edge_cases();
  const auto random = testing::random_problems(testing::run_seed(), 60);
  list.insert(list.end(), random.begin(), random.end());
  return list;
}

std::vector<float> random_floats(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

TEST(CudaIndex, Im2colAndCol2imGathersAreTheSharedMath) {
  const uint64_t seed = testing::run_seed();
  for (const ConvProblem& p : corpus()) {
    for (int64_t images : {int64_t(1), p.n}) {
      const Im2colGeometry g = make_im2col_geometry(p, images);
      const cuda::Im2colDivisors d = cuda::Im2colDivisors::of(g);
      const std::vector<float> x = random_floats(std::size_t(images * g.image_stride), seed);
      for (int64_t row = 0; row < col_rows(g); ++row) {
        const ColRow t = split_col_row(g, row);
        for (int64_t e = 0; e < col_cols(g); ++e) {
          const float fast = cuda::im2col_gather(g, d, t, x.data() + t.c * plane_elems(g), e);
          const float plain = im2col_element(g, x.data(), row, e);
          ASSERT_EQ(std::memcmp(&fast, &plain, sizeof fast), 0)
              << p.descriptor() << " images " << images << " row " << row << " col " << e;
        }
      }
      const std::vector<float> col = random_floats(std::size_t(col_elems(g)), seed + 1);
      const int64_t total = g.images * g.channels * plane_elems(g);
      std::vector<int> written(std::size_t(images * g.image_stride), 0);
      for (int64_t e = 0; e < total; ++e) {
        int64_t offset = -1;
        const float fast = cuda::col2im_gather(g, d, col.data(), e, &offset);
        const int64_t image = offset / g.image_stride, in_image = offset % g.image_stride;
        const int64_t c = in_image / plane_elems(g), pixel = in_image % plane_elems(g);
        const float plain = col2im_element(g, col.data(), image, c, pixel / g.in_w, pixel % g.in_w);
        ASSERT_EQ(std::memcmp(&fast, &plain, sizeof fast), 0)
            << p.descriptor() << " images " << images << " element " << e;
        ASSERT_GE(offset, 0);
        ++written[std::size_t(offset)];
      }
      for (int64_t m = 0; m < images; ++m) {
        for (int64_t i = 0; i < g.channels * plane_elems(g); ++i) {
          ASSERT_EQ(written[std::size_t(m * g.image_stride + i)], 1)
              << p.descriptor() << ": dx element " << i << " of image " << m;
        }
      }
    }
  }
}

TEST(CudaIndex, FftElementAtWithTheStepAsADivider) {
  for (const ConvProblem& p : corpus()) {
    for (Pass pass : testing::all_passes()) {
      const FftGeometry g = fft_geometry(p, pass);
      for (FftTensor t : {FftTensor::x, FftTensor::w, FftTensor::y}) {
        const FftPlacement& pl = fft_placement(g, t);
        const cuda::PlacementSteps steps = cuda::PlacementSteps::of(pl);
        for (int64_t slot = 0; slot < g.h.size; ++slot) {
          ASSERT_EQ(cuda::fft_element_at(pl.h, steps.h, slot), fft_element_at(pl.h, slot))
              << p.descriptor() << " " << to_string(pass) << " h slot " << slot;
        }
        for (int64_t slot = 0; slot < g.w.size; ++slot) {
          ASSERT_EQ(cuda::fft_element_at(pl.w, steps.w, slot), fft_element_at(pl.w, slot))
              << p.descriptor() << " " << to_string(pass) << " w slot " << slot;
        }
      }
    }
  }
}

void plane_shape(const ConvProblem& p, FftTensor t, int64_t* h, int64_t* w) {
  if (t == FftTensor::x) *h = p.h, *w = p.w;
  if (t == FftTensor::w) *h = p.r, *w = p.s;
  if (t == FftTensor::y) *h = p.out_h(), *w = p.out_w();
}

TEST(CudaFftStaging, LayoutHoldsBothInputsOnAlignedRegions) {
  for (const ConvProblem& p : corpus()) {
    for (Pass pass : testing::all_passes()) {
      const FftGeometry g = fft_geometry(p, pass);
      const int64_t plane = g.h.size * g.w.size;
      const FftStagingLayout sep = fft_staging_layout(g, FftStaging::separate);
      EXPECT_EQ(sep.staging_planes, g.staging_planes) << p.descriptor() << " " << to_string(pass);
      EXPECT_EQ(sep.b_offset, 0);

      const FftStagingLayout f = fft_staging_layout(g, FftStaging::fused);
      const std::string where = p.descriptor() + " " + to_string(pass);
      EXPECT_EQ(f.a_floats, fft_planes(g, g.input_a) * plane) << where;
      EXPECT_EQ(f.b_floats, fft_planes(g, g.input_b) * plane) << where;
      EXPECT_EQ(f.b_offset % 64, 0) << where;  // 256 bytes of floats
      EXPECT_GE(f.b_offset, f.a_floats) << where;
      EXPECT_LT(f.b_offset - f.a_floats, 64) << where;
      EXPECT_GE(f.staging_planes * plane, f.covered()) << where;
      EXPECT_GE(f.staging_planes, fft_planes(g, g.output)) << where;
      // The schedule's workspace really has that staging.
      const cuda::FftSchedule s = cuda::fft_schedule(p, pass, 0, FftStaging::fused);
      EXPECT_GE(s.geometry.staging.bytes, 4 * f.covered()) << where;
      EXPECT_GE(s.geometry.staging.bytes, 4 * fft_planes(g, g.output) * plane) << where;
    }
  }
}

TEST(CudaFftStaging, FusedGatherWritesWhatSeparatePlacementsWrite) {
  uint64_t seed = testing::run_seed() + 11;
  int checked = 0;
  for (const ConvProblem& p : corpus()) {
    for (Pass pass : testing::all_passes()) {
      const FftGeometry g = fft_geometry(p, pass);
      const FftStagingLayout l = fft_staging_layout(g, FftStaging::fused);
      const cuda::PlaneSplit split = cuda::PlaneSplit::of(g.h.size, g.w.size);
      const FftTensor inputs[2] = {g.input_a, g.input_b};
      std::vector<float> tensors[2];
      std::vector<float> separate[2];
      cuda::StagedInput staged[2];
      for (int i = 0; i < 2; ++i) {
        int64_t h = 0, w = 0;
        plane_shape(p, inputs[i], &h, &w);
        const int64_t planes = fft_planes(g, inputs[i]);
        tensors[i] = random_floats(std::size_t(planes * h * w), seed++);
        const FftPlacement& pl = fft_placement(g, inputs[i]);
        staged[i] = cuda::StagedInput::of(pl, tensors[i].data(), h, w, planes);
        separate[i].resize(std::size_t(planes * g.h.size * g.w.size));
        for (int64_t e = 0; e < int64_t(separate[i].size()); ++e) {
          separate[i][std::size_t(e)] =
              cuda::fft_place_value(pl, staged[i].steps, split, tensors[i].data(), h, w, e);
        }
      }
      std::vector<float> fused(std::size_t(l.covered()), std::numeric_limits<float>::quiet_NaN());
      for (int64_t e = 0; e < l.covered(); ++e) {
        float v = 0.0f;
        if (cuda::fft_place_pair_value(staged[0], staged[1], l.a_floats, l.b_offset, split, e, &v))
          fused[std::size_t(e)] = v;
      }
      const std::string where = p.descriptor() + " " + to_string(pass);
      ASSERT_EQ(std::memcmp(fused.data(), separate[0].data(), separate[0].size() * 4), 0)
          << where << ": region A";
      ASSERT_EQ(std::memcmp(fused.data() + l.b_offset, separate[1].data(), separate[1].size() * 4),
                0)
          << where << ": region B";
      for (int64_t e = l.a_floats; e < l.b_offset; ++e) {
        ASSERT_TRUE(std::isnan(fused[std::size_t(e)]))
            << where << ": gap float " << e << " written";
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(CudaFftStaging, KnobValueIsParsedOrRefusedByName) {
  EXPECT_EQ(fft_staging_from("fused"), FftStaging::fused);
  EXPECT_EQ(fft_staging_from("separate"), FftStaging::separate);
  try {
    fft_staging_from("fuse");
    FAIL() << "'fuse' accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'fuse'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convlab
