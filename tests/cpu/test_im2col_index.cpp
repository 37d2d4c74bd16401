// The shared im2col index math (lib/strategy/im2col_index.hpp) against brute force written
// straight from the definition, and the CPU row loops against the per-element functions the
// CUDA kernels call (bit for bit, so both executors fold columns identically).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "convlab/error.hpp"
#include "lib/cpu/im2col/im2col_loops.hpp"
#include "strategy/im2col_index.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

TEST(Im2colIndex, FloorDivMatchesMathematicalFloor) {
  for (int64_t a = -20; a <= 20; ++a) {
    for (int64_t b = 1; b <= 5; ++b) {
      int64_t expected = 0;
      while (expected * b > a) --expected;
      while ((expected + 1) * b <= a) ++expected;
      EXPECT_EQ(floor_div(a, b), expected) << a << " / " << b;
    }
  }
}

// Every (size, tap, pad, stride, dilation) of a small range: the valid range and the inverse
// map against enumeration of the forward definition.
TEST(Im2colIndex, OneDimensionalMapsMatchEnumeration) {
  int checked = 0;
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t kernel = 1; kernel <= 4; ++kernel)
      for (int64_t dil = 1; dil <= 3; ++dil)
        for (int64_t pad = 0; pad <= 5; ++pad)
          for (int64_t stride = 1; stride <= 3; ++stride) {
            const int64_t dilated = (kernel - 1) * dil + 1;
            if (in + 2 * pad < dilated) continue;
            const int64_t out = (in + 2 * pad - dilated) / stride + 1;
            for (int64_t tap = 0; tap < kernel; ++tap) {
              int64_t first = -1, last = -1;
              for (int64_t o = 0; o < out; ++o) {
                const int64_t i = o * stride - pad + tap * dil;
                EXPECT_EQ(input_coord(o, tap, pad, stride, dil), i);
                if (i >= 0 && i < in) {
                  if (first < 0) first = o;
                  EXPECT_TRUE(last < 0 || last == o - 1) << "valid outputs are contiguous";
                  last = o;
                }
              }
              const OutputRange range = valid_outputs(in, out, tap, pad, stride, dil);
              EXPECT_EQ(range.begin == range.end, first < 0);
              if (first >= 0) {
                EXPECT_EQ(range.begin, first);
                EXPECT_EQ(range.end, last + 1);
              }
              for (int64_t i = 0; i < in; ++i) {
                int64_t expected = -1;
                for (int64_t o = 0; o < out; ++o) {
                  if (o * stride - pad + tap * dil == i) expected = o;
                }
                EXPECT_EQ(output_coord(i, tap, pad, stride, dil, out), expected)
                    << "in " << i << " tap " << tap << " pad " << pad << " stride " << stride
                    << " dilation " << dil << " out " << out;
              }
              ++checked;
            }
          }
  EXPECT_GT(checked, 1000);
}

TEST(Im2colIndex, GeometryFromProblem) {
  ConvProblem p;
  p.n = 3, p.c = 6, p.h = 10, p.w = 7, p.k = 9, p.r = 3, p.s = 2;
  p.pad_h = 1, p.stride_h = 2, p.dilation_w = 2, p.groups = 3;
  const Im2colGeometry g = make_im2col_geometry(p, 2);
  EXPECT_EQ(g.channels, 2);
  EXPECT_EQ(g.out_h, p.out_h());
  EXPECT_EQ(g.out_w, p.out_w());
  EXPECT_EQ(col_rows(g), 2 * 3 * 2);
  EXPECT_EQ(col_cols(g), 2 * p.out_h() * p.out_w());
  EXPECT_EQ(col_elems(g), col_rows(g) * col_cols(g));
  EXPECT_EQ(g.image_stride, 6 * 10 * 7);
  EXPECT_EQ(group_offset(g, 2), 2 * 2 * 10 * 7);
  EXPECT_FALSE(is_pointwise(g));
  for (int64_t row = 0; row < col_rows(g); ++row) {
    const ColRow t = split_col_row(g, row);
    EXPECT_EQ(col_row(g, t.c, t.i, t.j), row);
  }
  EXPECT_THROW(make_im2col_geometry(p, 0), Error);
  EXPECT_THROW(make_im2col_geometry(p, 4), Error);
  p.r = p.s = 1, p.pad_h = 0, p.stride_h = 1;
  EXPECT_TRUE(is_pointwise(make_im2col_geometry(p, 1)));
  p.pad_w = 0, p.pad_h_end = 1;  // an end padding only: the output is larger than x
  EXPECT_FALSE(is_pointwise(make_im2col_geometry(p, 1)));
  p.pad_h_end = std::nullopt;
  EXPECT_TRUE(is_pointwise(make_im2col_geometry(p, 1)));
  p.stride_w = 2;
  EXPECT_FALSE(is_pointwise(make_im2col_geometry(p, 1)));
}

// Small problems covering every feature: the edge cases that stay small, and random ones.
std::vector<ConvProblem> index_problems() {
  std::vector<ConvProblem> problems;
  for (const ConvProblem& p : testing::edge_cases()) {
    if (p.x_elems() <= 4096 && p.n * p.out_h() * p.out_w() * p.c * p.r * p.s <= 200000) {
      problems.push_back(p);
    }
  }
  for (const ConvProblem& p : testing::random_problems(7, 60)) {
    if (p.n * p.out_h() * p.out_w() * p.c * p.r * p.s <= 200000) problems.push_back(p);
  }
  // Unit strides with output rows as wide as input rows, where the CPU loops copy a tap's
  // row over several output rows at once: odd and even kernels, vertical dilation, padding
  // taller than the kernel, a one-pixel image (every column in the side padding), groups.
  for (const char* same : {"mb2ic3ih9iw7oc2kh3kw3ph1pw1", "mb1ic2ih6iw10oc2kh5kw5ph2pw2",
                           "mb1ic2ih8iw5oc2kh3kw3ph2pw1dh1", "mb2ic4ih5iw5oc4kh1kw3ph0pw1g2",
                           "mb1ic1ih1iw1oc1kh3kw3ph1pw1", "mb1ic2ih4iw3oc1kh3kw3ph3pw1"}) {
    problems.push_back(testing::problem(same));
  }
  return problems;
}

std::vector<float> random_floats(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = u(rng);
  return v;
}

// col straight from the definition in the header comment, for the images [0, b) of group g.
std::vector<float> brute_im2col(const ConvProblem& p, const std::vector<float>& x, int64_t group,
                                int64_t b) {
  const int64_t cg = p.c_per_group(), oh_n = p.out_h(), ow_n = p.out_w();
  const int64_t cols = b * oh_n * ow_n;
  std::vector<float> col(static_cast<size_t>(cg * p.r * p.s * cols), -7.0f);
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t i = 0; i < p.r; ++i)
      for (int64_t j = 0; j < p.s; ++j)
        for (int64_t m = 0; m < b; ++m)
          for (int64_t oh = 0; oh < oh_n; ++oh)
            for (int64_t ow = 0; ow < ow_n; ++ow) {
              const int64_t ih = oh * p.stride_h - p.pad_h + i * p.dilation_h;
              const int64_t iw = ow * p.stride_w - p.pad_w + j * p.dilation_w;
              float v = 0.0f;
              if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) {
                v = x[((m * p.c + group * cg + c) * p.h + ih) * p.w + iw];
              }
              col[((c * p.r + i) * p.s + j) * cols + (m * oh_n + oh) * ow_n + ow] = v;
            }
  return col;
}

TEST(Im2colIndex, Im2colMatchesDefinition) {
  int cases = 0;
  for (const ConvProblem& p : index_problems()) {
    const std::vector<float> x = random_floats(p.x_elems(), 11);
    for (int64_t b = 1; b <= p.n; ++b) {
      const Im2colGeometry g = make_im2col_geometry(p, b);
      for (int64_t group = 0; group < p.groups; ++group) {
        const std::vector<float> expected = brute_im2col(p, x, group, b);
        const float* x_group = x.data() + group_offset(g, group);
        std::vector<float> loops(expected.size(), -9.0f);
        im2col::im2col_cpu(g, x_group, loops.data());
        for (int64_t row = 0; row < col_rows(g); ++row) {
          for (int64_t col = 0; col < col_cols(g); ++col) {
            const size_t e = static_cast<size_t>(row * col_cols(g) + col);
            ASSERT_EQ(im2col_element(g, x_group, row, col), expected[e])
                << p.descriptor() << " b " << b << " group " << group << " row " << row << " col "
                << col;
            const int64_t src = im2col_source(g, row, col);
            if (src >= 0) ASSERT_EQ(x_group[src], expected[e]);
          }
        }
        ASSERT_EQ(loops, expected) << p.descriptor() << " b " << b << " group " << group;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 100);
}

// col2im as a scatter, straight from the adjoint definition, in double: every col entry is
// added to the x element its forward tap read.
std::vector<double> brute_col2im(const ConvProblem& p, const std::vector<float>& col, int64_t b) {
  const int64_t cg = p.c_per_group(), oh_n = p.out_h(), ow_n = p.out_w();
  const int64_t cols = b * oh_n * ow_n;
  std::vector<double> dx(static_cast<size_t>(b * cg * p.h * p.w), 0.0);
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t i = 0; i < p.r; ++i)
      for (int64_t j = 0; j < p.s; ++j)
        for (int64_t m = 0; m < b; ++m)
          for (int64_t oh = 0; oh < oh_n; ++oh)
            for (int64_t ow = 0; ow < ow_n; ++ow) {
              const int64_t ih = oh * p.stride_h - p.pad_h + i * p.dilation_h;
              const int64_t iw = ow * p.stride_w - p.pad_w + j * p.dilation_w;
              if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
              dx[((m * cg + c) * p.h + ih) * p.w + iw] +=
                  col[((c * p.r + i) * p.s + j) * cols + (m * oh_n + oh) * ow_n + ow];
            }
  return dx;
}

TEST(Im2colIndex, Col2imGatherMatchesScatterExactlyOnIntegers) {
  int cases = 0;
  for (const ConvProblem& p : index_problems()) {
    for (int64_t b : {int64_t{1}, p.n}) {
      // The gather runs over one group with its own channel count; give it a one-group
      // tensor so the image stride is that group's.
      ConvProblem one = p;
      one.groups = 1, one.c = p.c_per_group(), one.k = 1;
      const Im2colGeometry g = make_im2col_geometry(one, b);
      std::mt19937_64 rng(5);
      std::uniform_int_distribution<int> small(-3, 3);
      std::vector<float> col(static_cast<size_t>(col_elems(g)));
      for (float& e : col) e = static_cast<float>(small(rng));
      const std::vector<double> expected = brute_col2im(one, col, b);
      std::vector<float> loops(expected.size(), -9.0f);
      im2col::col2im_cpu(g, col.data(), loops.data());
      for (int64_t m = 0; m < b; ++m)
        for (int64_t c = 0; c < g.channels; ++c)
          for (int64_t ih = 0; ih < g.in_h; ++ih)
            for (int64_t iw = 0; iw < g.in_w; ++iw) {
              const size_t e =
                  static_cast<size_t>(((m * g.channels + c) * g.in_h + ih) * g.in_w + iw);
              ASSERT_EQ(double(col2im_element(g, col.data(), m, c, ih, iw)), expected[e])
                  << p.descriptor() << " b " << b << " image " << m << " c " << c << " ih " << ih
                  << " iw " << iw;
              ASSERT_EQ(double(loops[e]), expected[e]) << p.descriptor();
            }
      ++cases;
    }
  }
  EXPECT_GT(cases, 50);
}

// On random reals the order of the sum matters; the row loop must reproduce the per-element
// gather's order exactly (what makes CPU and GPU col2im agree bit for bit).
TEST(Im2colIndex, Col2imLoopsBitwiseEqualGatherOnReals) {
  for (const ConvProblem& p : index_problems()) {
    ConvProblem one = p;
    one.groups = 1, one.c = p.c_per_group(), one.k = 1;
    const Im2colGeometry g = make_im2col_geometry(one, p.n);
    const std::vector<float> col = random_floats(col_elems(g), 3);
    std::vector<float> loops(static_cast<size_t>(p.n * g.channels * plane_elems(g)), -9.0f);
    im2col::col2im_cpu(g, col.data(), loops.data());
    size_t e = 0;
    for (int64_t m = 0; m < p.n; ++m)
      for (int64_t c = 0; c < g.channels; ++c)
        for (int64_t ih = 0; ih < g.in_h; ++ih)
          for (int64_t iw = 0; iw < g.in_w; ++iw, ++e) {
            const float gathered = col2im_element(g, col.data(), m, c, ih, iw);
            ASSERT_EQ(std::memcmp(&gathered, &loops[e], sizeof(float)), 0)
                << p.descriptor() << " at " << e << ": " << gathered << " vs " << loops[e];
          }
  }
}

// <im2col(x), col> = <x, col2im(col)>: col2im is the adjoint of im2col.
TEST(Im2colIndex, Col2imIsTheAdjointOfIm2col) {
  for (const ConvProblem& p : index_problems()) {
    ConvProblem one = p;
    one.groups = 1, one.c = p.c_per_group(), one.k = 1;
    const Im2colGeometry g = make_im2col_geometry(one, p.n);
    const std::vector<float> x = random_floats(one.x_elems(), 1);
    const std::vector<float> col = random_floats(col_elems(g), 2);
    std::vector<float> cx(col.size()), dx(x.size());
    im2col::im2col_cpu(g, x.data(), cx.data());
    im2col::col2im_cpu(g, col.data(), dx.data());
    double lhs = 0, rhs = 0, scale = 0;
    for (size_t i = 0; i < col.size(); ++i) lhs += double(cx[i]) * col[i];
    for (size_t i = 0; i < x.size(); ++i) {
      rhs += double(x[i]) * dx[i];
      scale += std::abs(double(x[i]) * dx[i]);
    }
    EXPECT_NEAR(lhs, rhs, 1e-5 * (scale + 1)) << p.descriptor();
  }
}

// Pixel blocks: hand values, then the properties for many sizes: in order, disjoint,
// covering [0, pixels), every block tile wide but the last, none empty.
TEST(Im2colIndex, PixelBlocksCoverTheImageInOrder) {
  EXPECT_EQ(pixel_block_count(10, 4), 3);
  EXPECT_EQ(pixel_block(10, 4, 2).begin, 8);
  EXPECT_EQ(pixel_block(10, 4, 2).end, 10);
  EXPECT_EQ(pixel_block_count(3136, 0), 1);  // 0: the whole image
  EXPECT_EQ(pixel_block(3136, 0, 0).end, 3136);
  EXPECT_EQ(pixel_block_count(49, 64), 1);  // wider than the image: the whole image
  EXPECT_EQ(pixel_block(49, 64, 0).end, 49);
  for (int64_t pixels : {1, 2, 7, 49, 196, 3136}) {
    for (int64_t tile : {0, 1, 3, 7, 48, 49, 50, 256}) {
      const int64_t count = pixel_block_count(pixels, tile);
      int64_t next = 0;
      for (int64_t k = 0; k < count; ++k) {
        const OutputRange b = pixel_block(pixels, tile, k);
        ASSERT_EQ(b.begin, next) << pixels << " " << tile << " " << k;
        ASSERT_GT(b.end, b.begin);
        if (k + 1 < count) ASSERT_EQ(b.end - b.begin, tile);
        if (tile > 0) ASSERT_LE(b.end - b.begin, tile);
        next = b.end;
      }
      ASSERT_EQ(next, pixels) << pixels << " " << tile;
    }
  }
}

// Tiles that divide nothing and tiles that cut output rows in the middle.
std::vector<int64_t> block_tiles(const ConvProblem& p) {
  return {1, 5, p.out_w() + 1, p.out_h() * p.out_w()};
}

// Each block of im2col_block_cpu is its columns of the definition; padding the block's row
// stride past its width leaves the gap untouched.
TEST(Im2colIndex, Im2colBlocksMatchDefinition) {
  int cases = 0;
  for (const ConvProblem& p : index_problems()) {
    const std::vector<float> x = random_floats(p.x_elems(), 13);
    const Im2colGeometry g = make_im2col_geometry(p, 1);
    const int64_t pixels = col_pixels(g), rows = col_rows(g);
    for (int64_t group = 0; group < p.groups; ++group) {
      const std::vector<float> expected = brute_im2col(p, x, group, 1);
      for (int64_t tile : block_tiles(p)) {
        for (int64_t k = 0; k < pixel_block_count(pixels, tile); ++k) {
          const OutputRange b = pixel_block(pixels, tile, k);
          const int64_t width = b.end - b.begin, ld = width + 3;
          std::vector<float> block(static_cast<size_t>(rows * ld), -9.0f);
          im2col::im2col_block_cpu(g, x.data() + group_offset(g, group), b.begin, b.end,
                                   block.data(), ld);
          for (int64_t row = 0; row < rows; ++row) {
            for (int64_t q = 0; q < ld; ++q) {
              const float want =
                  q < width ? expected[static_cast<size_t>(row * pixels + b.begin + q)] : -9.0f;
              ASSERT_EQ(block[static_cast<size_t>(row * ld + q)], want)
                  << p.descriptor() << " tile " << tile << " block " << k << " row " << row
                  << " column " << q;
            }
          }
        }
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 100);
}

// The blocks of col2im_block_add_cpu, added into a zeroed dx, sum to the adjoint's scatter
// (exact on integers); a block that is the whole image reproduces the gather bit for bit on
// reals.
TEST(Im2colIndex, Col2imBlocksAddUpToTheScatter) {
  int cases = 0;
  for (const ConvProblem& p : index_problems()) {
    ConvProblem one = p;
    one.groups = 1, one.c = p.c_per_group(), one.k = 1, one.n = 1;
    const Im2colGeometry g = make_im2col_geometry(one, 1);
    const int64_t pixels = col_pixels(g), rows = col_rows(g);
    std::mt19937_64 rng(17);
    std::uniform_int_distribution<int> small(-3, 3);
    std::vector<float> col(static_cast<size_t>(col_elems(g)));
    for (float& e : col) e = static_cast<float>(small(rng));
    const std::vector<double> expected = brute_col2im(one, col, 1);
    for (int64_t tile : block_tiles(p)) {
      std::vector<float> dx(expected.size(), 0.0f);
      for (int64_t k = 0; k < pixel_block_count(pixels, tile); ++k) {
        const OutputRange b = pixel_block(pixels, tile, k);
        const int64_t width = b.end - b.begin;
        std::vector<float> block(static_cast<size_t>(rows * width));
        for (int64_t row = 0; row < rows; ++row)
          for (int64_t q = 0; q < width; ++q)
            block[static_cast<size_t>(row * width + q)] =
                col[static_cast<size_t>(row * pixels + b.begin + q)];
        im2col::col2im_block_add_cpu(g, block.data(), width, b.begin, b.end, dx.data());
      }
      for (size_t e = 0; e < dx.size(); ++e) {
        ASSERT_EQ(double(dx[e]), expected[e]) << p.descriptor() << " tile " << tile << " at " << e;
      }
      ++cases;
    }
    const std::vector<float> reals = random_floats(col_elems(g), 19);
    std::vector<float> whole(expected.size(), 0.0f), gathered(expected.size(), -9.0f);
    im2col::col2im_block_add_cpu(g, reals.data(), pixels, 0, pixels, whole.data());
    im2col::col2im_cpu(g, reals.data(), gathered.data());
    ASSERT_EQ(std::memcmp(whole.data(), gathered.data(), sizeof(float) * whole.size()), 0)
        << p.descriptor();
  }
  EXPECT_GT(cases, 100);
}

TEST(Im2colIndex, StagingRoundTrip) {
  const int64_t rows = 3, pixels = 5, images = 4, channels = 7;
  const std::vector<float> src = random_floats(images * channels * pixels, 9);
  std::vector<float> staged(static_cast<size_t>(rows * images * pixels));
  const int64_t first_row = 2;  // the group's first channel within the tensor
  im2col::gather_images(src.data() + first_row * pixels, rows, pixels, images, channels,
                        staged.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t m = 0; m < images; ++m)
      for (int64_t q = 0; q < pixels; ++q) {
        EXPECT_EQ(staged[(r * images + m) * pixels + q],
                  src[(m * channels + first_row + r) * pixels + q]);
      }
  std::vector<float> back(src.size(), 0.0f);
  im2col::scatter_images(staged.data(), rows, pixels, images, channels,
                         back.data() + first_row * pixels);
  for (int64_t m = 0; m < images; ++m)
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t q = 0; q < pixels; ++q) {
        const size_t e = static_cast<size_t>((m * channels + ch) * pixels + q);
        const bool in_group = ch >= first_row && ch < first_row + rows;
        EXPECT_EQ(back[e], in_group ? src[e] : 0.0f);
      }
}

}  // namespace
}  // namespace convlab
