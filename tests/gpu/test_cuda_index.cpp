// The division-free index math of the cuda.* staging kernels against the plain-division
// functions of lib/strategy that the CPU strategies use, element by element over the test
// corpus: im2col_gather and col2im_gather (the same values, bit for bit, and col2im writes
// each dx element exactly once), and fft_element_at with the step as a divider (the same
// element for every slot of every placement). Host only: the kernels call these very
// functions.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "cuda/fft/fft_kernels.hpp"
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

}  // namespace
}  // namespace convlab
