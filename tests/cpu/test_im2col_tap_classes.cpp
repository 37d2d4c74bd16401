// The tap classes of cpu.im2col (lib/strategy/im2col_tap_classes.hpp) against enumeration of
// the convolution's definition: the classes cover every output pixel once, and a tap a class
// leaves out reads padding for every pixel of the class (so leaving it out is exact). Then the
// class loops (lib/cpu/im2col/tap_class_loops.hpp) against the full column buffer's
// per-element function, and their adjoint against col2im; backward-data as the transposed
// convolution's classes against the definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "convlab/error.hpp"
#include "cpu/isa.hpp"
#include "lib/cpu/im2col/im2col_loops.hpp"
#include "lib/cpu/im2col/tap_class_loops.hpp"
#include "strategy/im2col_index.hpp"
#include "strategy/im2col_tap_classes.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using im2col::add_class_filter_columns;
using im2col::col2im_class_add_cpu;
using im2col::col2im_cpu;
using im2col::gather_class;
using im2col::im2col_class_cpu;
using im2col::im2col_cpu;
using im2col::scatter_class;

// The instruction sets this CPU runs: the loops' row copies take each in turn.
std::vector<CpuIsa> supported_isas() {
  std::vector<CpuIsa> isas;
  for (const auto& entry : kCpuIsaNames) {
    if (cpu_isa_supported(entry.value)) isas.push_back(entry.value);
  }
  return isas;
}

bool reads_inside(int64_t out, int64_t tap, int64_t in, int64_t pad, int64_t stride,
                  int64_t dilation) {
  const int64_t coord = out * stride - pad + tap * dilation;
  return coord >= 0 && coord < in;
}

TEST(Im2colTapClasses, ValidTapsMatchEnumeration) {
  int checked = 0;
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t kernel = 1; kernel <= 5; ++kernel)
      for (int64_t dil = 1; dil <= 3; ++dil)
        for (int64_t pad = 0; pad <= 5; ++pad)
          for (int64_t stride = 1; stride <= 3; ++stride) {
            const int64_t dilated = (kernel - 1) * dil + 1;
            if (in + 2 * pad < dilated) continue;
            const int64_t out_size = (in + 2 * pad - dilated) / stride + 1;
            for (int64_t out = 0; out < out_size; ++out) {
              const OutputRange taps = valid_taps(out, in, kernel, pad, stride, dil);
              for (int64_t tap = 0; tap < kernel; ++tap) {
                const bool inside = tap >= taps.begin && tap < taps.end;
                ASSERT_EQ(inside, reads_inside(out, tap, in, pad, stride, dil))
                    << "in " << in << " kernel " << kernel << " dil " << dil << " pad " << pad
                    << " stride " << stride << " out " << out << " tap " << tap;
                ++checked;
              }
            }
          }
  EXPECT_GT(checked, 10000);
}

// Every geometry of a small range, end padding included (an output wider than the input
// allows), both cuts: each pixel in exactly one class, each tap outside its class's rectangle
// reading padding, and the classes' products between the in-image ones and the full
// buffer's; the exact cut's products are the in-image ones.
TEST(Im2colTapClasses, CoverEveryPixelOnceAndLeaveOutOnlyPadding) {
  int geometries = 0;
  for (int64_t in = 1; in <= 8; ++in)
    for (int64_t kernel = 1; kernel <= 5; ++kernel)
      for (int64_t dil = 1; dil <= 2; ++dil)
        for (int64_t pad = 0; pad <= 4; ++pad)
          for (int64_t stride = 1; stride <= 3; ++stride) {
            const int64_t dilated = (kernel - 1) * dil + 1;
            if (in + 2 * pad < dilated) continue;
            Im2colGeometry g;
            g.channels = 1;
            g.in_h = in;
            g.in_w = in + 1;  // rectangular, so that rows and columns are not confused
            g.kernel_h = kernel;
            g.kernel_w = kernel;
            g.pad_h = g.pad_w = pad;
            g.stride_h = g.stride_w = stride;
            g.dilation_h = g.dilation_w = dil;
            g.out_h = (g.in_h + 2 * pad - dilated) / stride + 1;
            g.out_w = (g.in_w + 2 * pad - dilated) / stride + 1;
            for (const ClassCut cut : {ClassCut::merged, ClassCut::exact}) {
              const std::vector<TapClass> classes = tap_classes(g, cut);
              std::vector<int> owner(static_cast<std::size_t>(g.out_h * g.out_w), 0);
              for (const TapClass& c : classes) {
                ASSERT_TRUE(c.taps_h.begin >= 0 && c.taps_h.end <= kernel);
                ASSERT_TRUE(c.taps_w.begin >= 0 && c.taps_w.end <= kernel);
                for (int64_t oh = c.rows.begin; oh < c.rows.end; ++oh)
                  for (int64_t ow = c.cols.begin; ow < c.cols.end; ++ow) {
                    ++owner[static_cast<std::size_t>(oh * g.out_w + ow)];
                    for (int64_t i = 0; i < kernel; ++i)
                      for (int64_t j = 0; j < kernel; ++j) {
                        const bool kept = i >= c.taps_h.begin && i < c.taps_h.end &&
                                          j >= c.taps_w.begin && j < c.taps_w.end;
                        const bool inside = reads_inside(oh, i, g.in_h, pad, stride, dil) &&
                                            reads_inside(ow, j, g.in_w, pad, stride, dil);
                        ASSERT_TRUE(kept || !inside)
                            << "pixel (" << oh << ", " << ow << ") tap (" << i << ", " << j
                            << ") reads the image but its class leaves it out; in " << in
                            << " kernel " << kernel << " pad " << pad << " stride " << stride
                            << " dil " << dil;
                      }
                  }
              }
              for (std::size_t p = 0; p < owner.size(); ++p) {
                ASSERT_EQ(owner[p], 1) << "pixel " << p << " in " << owner[p] << " classes";
              }
              const int64_t full = g.out_h * g.out_w * kernel * kernel;
              EXPECT_LE(in_image_products(g), tap_class_products(classes));
              EXPECT_LE(tap_class_products(classes), full);
              // Exact classes multiply no tap that reads padding.
              if (cut == ClassCut::exact) {
                EXPECT_EQ(tap_class_products(classes), in_image_products(g));
              }
            }
            ++geometries;
          }
  EXPECT_GT(geometries, 500);
}

// ResNet-50's 7x7 layer (3x3, pad 1): the five classes of the header comment, 369 of the 441
// products of the full buffer (the 4 corners keep 2 padding taps each: 361 read the image).
TEST(Im2colTapClasses, ResNetSevenBySeven) {
  const Im2colGeometry g = make_im2col_geometry(testing::problem("mb1ic2ih7oc4kh3ph1"), 1);
  const std::vector<TapClass> classes = tap_classes(g);
  ASSERT_EQ(classes.size(), 5u);
  auto expect = [](const TapClass& c, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t i0,
                   int64_t i1, int64_t j0, int64_t j1) {
    EXPECT_EQ(c.rows.begin, r0);
    EXPECT_EQ(c.rows.end, r1);
    EXPECT_EQ(c.cols.begin, c0);
    EXPECT_EQ(c.cols.end, c1);
    EXPECT_EQ(c.taps_h.begin, i0);
    EXPECT_EQ(c.taps_h.end, i1);
    EXPECT_EQ(c.taps_w.begin, j0);
    EXPECT_EQ(c.taps_w.end, j1);
  };
  expect(classes[0], 0, 1, 0, 7, 1, 3, 0, 3);  // top row
  expect(classes[1], 1, 6, 0, 1, 0, 3, 1, 3);  // left edge
  expect(classes[2], 1, 6, 1, 6, 0, 3, 0, 3);  // interior
  expect(classes[3], 1, 6, 6, 7, 0, 3, 0, 2);  // right edge
  expect(classes[4], 6, 7, 0, 7, 0, 2, 0, 3);  // bottom row
  EXPECT_EQ(tap_class_products(classes), 369);
  EXPECT_EQ(in_image_products(g), 361);
  // The top row's filter columns: channel by channel, taps (1..2) x (0..2).
  std::vector<int64_t> rows(static_cast<std::size_t>(g.channels * class_taps(classes[0])));
  tap_class_rows(g, classes[0], rows.data());
  const std::vector<int64_t> expected = {3, 4, 5, 6, 7, 8, 12, 13, 14, 15, 16, 17};
  EXPECT_EQ(rows, expected);
}

// The class loops, on random data over the corpus's geometries and b images: each entry of a
// class's column buffer is the full buffer's entry of its tap and pixel (bit for bit), the
// stage round-trips, and the classes' adjoints added into dx sum to col2im of the full buffer
// (integer data: exact in any order).
TEST(Im2colTapClasses, LoopsMatchTheFullColumnBuffer) {
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::random_problems(testing::run_seed() + 11, 40)) {
    problems.push_back(p);
  }
  std::mt19937 rng(static_cast<uint32_t>(testing::run_seed()));
  std::uniform_int_distribution<int> digit(-3, 3);
  const std::vector<CpuIsa> isas = supported_isas();
  int classes_checked = 0;
  for (ConvProblem p : problems) {
    p.n = std::min<int64_t>(p.n, 3);
    if (p.x_elems() * p.r * p.s > (int64_t{1} << 22)) continue;
    Im2colGeometry g = make_im2col_geometry(p, p.n);
    std::vector<float> x(static_cast<std::size_t>(p.x_elems()));
    for (float& v : x) v = static_cast<float>(digit(rng));
    std::vector<float> full(static_cast<std::size_t>(col_elems(g)));
    im2col_cpu(g, x.data(), full.data());
    std::vector<float> dx_classes(x.size(), 0.0f), dx_full(x.size(), 0.0f);
    for (const TapClass& c : tap_classes(g)) {
      const int64_t pixels = class_pixels(c), cols = g.images * pixels;
      std::vector<int64_t> rows(static_cast<std::size_t>(g.channels * class_taps(c)));
      tap_class_rows(g, c, rows.data());
      std::vector<float> col(rows.size() * static_cast<std::size_t>(cols), -99.0f);
      const CpuIsa isa = isas[classes_checked % isas.size()];
      im2col_class_cpu(g, c, x.data(), col.data(), cols, isa);
      // Rows further apart hold the same floats, and the ones between rows are not written.
      const int64_t pitch = cols + 1 + classes_checked % 17;
      std::vector<float> pitched(rows.size() * static_cast<std::size_t>(pitch), -99.0f);
      im2col_class_cpu(g, c, x.data(), pitched.data(), pitch, isa);
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const float* row = pitched.data() + r * static_cast<std::size_t>(pitch);
        ASSERT_EQ(std::memcmp(row, col.data() + r * static_cast<std::size_t>(cols),
                              static_cast<std::size_t>(cols) * sizeof(float)),
                  0)
            << p.descriptor() << " row " << r << " at pitch " << pitch;
        for (int64_t k = cols; k < pitch; ++k) ASSERT_EQ(row[k], -99.0f) << p.descriptor();
      }
      for (std::size_t r = 0; r < rows.size(); ++r)
        for (int64_t m = 0; m < g.images; ++m)
          for (int64_t oh = c.rows.begin; oh < c.rows.end; ++oh)
            for (int64_t ow = c.cols.begin; ow < c.cols.end; ++ow) {
              const int64_t at =
                  m * pixels + (oh - c.rows.begin) * range_size(c.cols) + (ow - c.cols.begin);
              const float want = full[static_cast<std::size_t>(
                  rows[r] * col_cols(g) + m * col_pixels(g) + oh * g.out_w + ow)];
              ASSERT_EQ(col[r * cols + at], want)
                  << p.descriptor() << " class rows [" << c.rows.begin << ", " << c.rows.end
                  << ") cols [" << c.cols.begin << ", " << c.cols.end << ") row " << r;
            }
      col2im_class_add_cpu(g, c, col.data(), dx_classes.data(), isa);
      // The stage: the class's pixels of a [2 channels] tensor out and back.
      std::vector<float> y(static_cast<std::size_t>(g.images * 2 * col_pixels(g)));
      for (float& v : y) v = static_cast<float>(digit(rng));
      std::vector<float> stage(static_cast<std::size_t>(2 * cols)), back(y.size(), 0.0f);
      gather_class(g, c, y.data(), 2, 2, stage.data(), isa);
      scatter_class(g, c, stage.data(), 2, 2, back.data(), isa);
      for (int64_t m = 0; m < g.images; ++m)
        for (int64_t ch = 0; ch < 2; ++ch)
          for (int64_t oh = c.rows.begin; oh < c.rows.end; ++oh)
            for (int64_t ow = c.cols.begin; ow < c.cols.end; ++ow) {
              const std::size_t at =
                  static_cast<std::size_t>((m * 2 + ch) * col_pixels(g) + oh * g.out_w + ow);
              ASSERT_EQ(back[at], y[at]) << p.descriptor();
            }
      ++classes_checked;
    }
    // Every (pixel, tap) that reads the image is in exactly one class, with the full buffer's
    // value, and both adjoints drop the padding: on integers the sums agree exactly.
    col2im_cpu(g, full.data(), dx_full.data());
    for (std::size_t e = 0; e < x.size(); ++e) {
      ASSERT_EQ(dx_classes[e], dx_full[e]) << p.descriptor() << " dx element " << e;
    }
  }
  EXPECT_GT(classes_checked, 100);
}

// Backward-filter adds a class's products into dW's columns of its taps by runs; the columns
// are the class's rows of the full column buffer (tap_class_rows), for merged and exact
// classes alike (exact corners have neither every tap row nor every tap column).
TEST(Im2colTapClasses, FilterColumnAddsMatchTheClassRows) {
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::random_problems(testing::run_seed() + 13, 40)) {
    problems.push_back(p);
  }
  std::mt19937 rng(static_cast<uint32_t>(testing::run_seed()));
  std::uniform_int_distribution<int> digit(-3, 3);
  const std::vector<CpuIsa> isas = supported_isas();
  int classes_checked = 0;
  for (const ConvProblem& p : problems) {
    const Im2colGeometry g = make_im2col_geometry(p, 1);
    const int64_t filter_row = col_rows(g), out_rows = 3, stride = filter_row + 5;
    if (out_rows * stride > (int64_t{1} << 22)) continue;
    for (ClassCut cut : {ClassCut::merged, ClassCut::exact}) {
      for (const TapClass& c : tap_classes(g, cut)) {
        const int64_t n = g.channels * class_taps(c);
        std::vector<int64_t> columns(static_cast<std::size_t>(n));
        tap_class_rows(g, c, columns.data());
        std::vector<float> sums(static_cast<std::size_t>(out_rows * n));
        for (float& v : sums) v = static_cast<float>(digit(rng));
        std::vector<float> dw(static_cast<std::size_t>(out_rows * stride));
        for (float& v : dw) v = static_cast<float>(digit(rng));
        std::vector<float> want = dw;
        for (int64_t r = 0; r < out_rows; ++r)
          for (int64_t j = 0; j < n; ++j) want[r * stride + columns[j]] += sums[r * n + j];
        add_class_filter_columns(g, c, g.channels, sums.data(), out_rows, dw.data(), stride,
                                 isas[classes_checked % isas.size()]);
        for (std::size_t e = 0; e < dw.size(); ++e) {
          ASSERT_EQ(dw[e], want[e]) << p.descriptor() << " class rows [" << c.rows.begin << ", "
                                    << c.rows.end << ") cols [" << c.cols.begin << ", "
                                    << c.cols.end << ") element " << e;
        }
        ++classes_checked;
      }
    }
  }
  EXPECT_GT(classes_checked, 100);
}

// Backward-data of stride-1 problems as the exact forward tap classes of the transposed
// convolution: each class's column buffer of dy, multiplied by its taps' columns of the
// flipped filter, gives exactly the dx of the definition (integer data), and each class
// multiplies only taps that read inside dy.
TEST(Im2colTapClasses, TransposedClassesGiveBackwardData) {
  std::vector<ConvProblem> problems;
  for (const ConvProblem& p : testing::edge_cases()) problems.push_back(p);
  for (const ConvProblem& p : testing::random_problems(testing::run_seed() + 12, 60)) {
    problems.push_back(p);
  }
  std::mt19937 rng(static_cast<uint32_t>(testing::run_seed() + 1));
  std::uniform_int_distribution<int> digit(-3, 3);
  const std::vector<CpuIsa> isas = supported_isas();
  int checked = 0;
  for (ConvProblem p : problems) {
    if (p.stride_h != 1 || p.stride_w != 1) {
      EXPECT_THROW(transposed_geometry(p), Error) << p.descriptor();
      continue;
    }
    p.n = std::min<int64_t>(p.n, 2);
    if (p.y_elems() * p.c_per_group() * p.r * p.s > (int64_t{1} << 22)) continue;
    Im2colGeometry gt = transposed_geometry(p);
    gt.images = p.n;
    std::vector<float> dy(static_cast<std::size_t>(p.y_elems())),
        w(static_cast<std::size_t>(p.w_elems()));
    for (float& v : dy) v = static_cast<float>(digit(rng));
    for (float& v : w) v = static_cast<float>(digit(rng));
    const int64_t cg = p.c_per_group(), kg = p.k_per_group(), oh_n = p.out_h(), ow_n = p.out_w();
    // Group 0 of every image, by the definition.
    std::vector<double> want(static_cast<std::size_t>(p.n * cg * p.h * p.w), 0.0);
    for (int64_t m = 0; m < p.n; ++m)
      for (int64_t k = 0; k < kg; ++k)
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t i = 0; i < p.r; ++i)
            for (int64_t j = 0; j < p.s; ++j)
              for (int64_t oh = 0; oh < oh_n; ++oh)
                for (int64_t ow = 0; ow < ow_n; ++ow) {
                  const int64_t ih = oh - p.pad_h + i * p.dilation_h;
                  const int64_t iw = ow - p.pad_w + j * p.dilation_w;
                  if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                  want[static_cast<std::size_t>(((m * cg + c) * p.h + ih) * p.w + iw)] +=
                      double(w[static_cast<std::size_t>(((k * cg + c) * p.r + i) * p.s + j)]) *
                      dy[static_cast<std::size_t>(((m * p.k + k) * oh_n + oh) * ow_n + ow)];
                }
    std::vector<float> flipped(w.size());
    flip_filter_rows(p, w.data(), 0, p.groups * kg, flipped.data());
    EXPECT_EQ(tap_class_products(tap_classes(gt, ClassCut::exact)), in_image_products(gt));
    std::vector<int> covered(want.size(), 0);
    for (const TapClass& tc : tap_classes(gt, ClassCut::exact)) {
      const int64_t rows = gt.channels * class_taps(tc), pixels = class_pixels(tc);
      const int64_t cols = gt.images * pixels;
      std::vector<float> col(static_cast<std::size_t>(rows * cols));
      std::vector<int64_t> columns(static_cast<std::size_t>(rows)),
          offsets(static_cast<std::size_t>(rows));
      im2col_class_cpu(gt, tc, dy.data(), col.data(), cols, isas[checked % isas.size()]);
      tap_class_rows(gt, tc, columns.data());
      flipped_tap_offsets(p, gt, tc, offsets.data());
      for (int64_t m = 0; m < gt.images; ++m)
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t ih = tc.rows.begin; ih < tc.rows.end; ++ih)
            for (int64_t iw = tc.cols.begin; iw < tc.cols.end; ++iw) {
              const int64_t at =
                  m * pixels + (ih - tc.rows.begin) * range_size(tc.cols) + (iw - tc.cols.begin);
              // The flipped copy's columns, and w read in place through the offsets (rows of
              // R*S floats per input channel).
              double got = 0, in_place = 0;
              for (int64_t r = 0; r < rows; ++r) {
                const double v = col[static_cast<std::size_t>(r * cols + at)];
                got += double(flipped[static_cast<std::size_t>(c * col_rows(gt) + columns[r])]) * v;
                in_place += double(w[static_cast<std::size_t>(c * p.r * p.s + offsets[r])]) * v;
              }
              const std::size_t e = static_cast<std::size_t>(((m * cg + c) * p.h + ih) * p.w + iw);
              ASSERT_EQ(got, want[e])
                  << p.descriptor() << " dx (" << m << ", " << c << ", " << ih << ", " << iw << ")";
              ASSERT_EQ(in_place, want[e])
                  << p.descriptor() << " dx (" << m << ", " << c << ", " << ih << ", " << iw
                  << "), w read through flipped_tap_offsets";
              ++covered[e];
            }
    }
    for (std::size_t e = 0; e < covered.size(); ++e) {
      ASSERT_EQ(covered[e], 1) << p.descriptor() << " dx element " << e;
    }
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace convlab
