// The implicit column buffer (lib/strategy/im2col_padded_grid.hpp) against the column buffer's
// definition: every row of it, at every output pixel, read from the padded image at the row's
// offset gives im2col_element's value; the reads stay inside the padded image; every column of
// it, at any stride, read at its pixel's offset (backward-filter's reading) gives it too; and
// the grid columns a GEMM writes, block by block, land on every output pixel once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "lib/cpu/im2col/padded_grid_loops.hpp"
#include "strategy/im2col_index.hpp"
#include "strategy/im2col_padded_grid.hpp"
#include "strategy/im2col_tap_classes.hpp"
#include "support/conv_tester.hpp"
#include "support/geometry_text.hpp"

namespace convlab {
namespace {

// Stride-1 geometries: odd and even kernels, dilation, padding beyond the kernel, none, an
// end padding (outputs wider than the image), a one-pixel image, groups, 1x1 with padding;
// and the transposed convolutions of the backward-data passes, whose padding may be negative.
std::vector<Im2colGeometry> geometries() {
  std::vector<Im2colGeometry> out;
  for (const char* text :
       {"mb1ic3ih9iw7oc2kh3kw3ph1pw1", "mb1ic2ih6iw10oc2kh5kw5ph2pw2", "mb1ic2ih8iw5oc2kh3kw3ph2pw1dh1",
        "mb1ic4ih5iw5oc4kh1kw3ph0pw1g2", "mb1ic1ih1iw1oc1kh3kw3ph1pw1", "mb1ic2ih4iw3oc1kh3kw3ph3pw1",
        "mb1ic3ih7iw6oc2kh2kw4ph0pw0", "mb1ic2ih6iw6oc3kh1kw1ph1pw1", "mb1ic2ih5iw9oc2kh3kw2ph0pw3dw2",
        "mb1ic5ih12iw12oc5kh7kw7ph3pw3", "mb1ic2ih6iw6oc2kh3kw3ph4pw4"}) {
    const ConvProblem p = testing::problem(text);
    out.push_back(make_im2col_geometry(p, 1));
    out.push_back(transposed_geometry(p));
  }
  for (ConvProblem p : testing::random_problems(testing::run_seed() + 21, 40)) {
    if (p.stride_h != 1 || p.stride_w != 1) continue;
    p.n = 1;
    out.push_back(make_im2col_geometry(p, 1));
    out.push_back(transposed_geometry(p));
  }
  return out;
}

using testing::describe;

TEST(PaddedGrid, RowsAreTheColumnBuffersRows) {
  std::mt19937 rng(static_cast<uint32_t>(testing::run_seed()));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  int checked = 0;
  for (const Im2colGeometry& g : geometries()) {
    ASSERT_TRUE(has_padded_grid(g));
    if (g.out_h <= 0 || g.out_w <= 0 || g.channels <= 0) continue;
    const PaddedGrid grid = padded_grid(g);
    ASSERT_EQ(grid.columns, (g.out_h - 1) * grid.width + g.out_w) << describe(g);
    std::vector<float> x(static_cast<std::size_t>(g.channels * plane_elems(g)));
    for (float& e : x) e = value(rng);
    // A sentinel past the padded image: a read beyond it would show.
    const int64_t elems = padded_grid_elems(g, grid);
    std::vector<float> padded(static_cast<std::size_t>(elems + 64), 12345.0f);
    im2col::pad_into_grid(g, grid, x.data(), padded.data());
    for (int64_t row = 0; row < col_rows(g); ++row) {
      const int64_t offset = grid_tap_offset(g, grid, row);
      ASSERT_GE(offset, 0);
      // The last grid column of the row is inside the padded image.
      ASSERT_LE(offset + grid.columns, elems) << describe(g) << " row " << row;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const float implicit = padded[static_cast<std::size_t>(offset + oh * grid.width + ow)];
          ASSERT_EQ(implicit, im2col_element(g, x.data(), row, oh * g.out_w + ow))
              << describe(g) << " row " << row << " output (" << oh << ", " << ow << ")";
        }
      }
    }
    for (int64_t e = elems; e < elems + 64; ++e) ASSERT_EQ(padded[e], 12345.0f) << describe(g);
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

// Backward-filter's reading: column `pixel` of row (c, i, j), for a run of images padded one
// after another, at c*plane + the tap's offset + the pixel's offset, with any stride: every
// element of every image's column buffer, reads inside the padded images.
TEST(PaddedGrid, ColumnsAtPixelOffsetsAreTheColumnBuffers) {
  std::mt19937 rng(static_cast<uint32_t>(testing::run_seed() + 1));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<Im2colGeometry> cases = geometries();
  for (const char* text : {"mb1ic3ih11iw9oc2kh3kw3sh2sw2ph1pw1", "mb1ic2ih13iw8oc2kh3kw2sh3sw2ph0pw1dh1",
                           "mb1ic4ih8iw8oc2kh1kw1sh2sw2ph0pw0", "mb1ic2ih9iw9oc2kh5kw5sh2sw3ph2pw2"}) {
    cases.push_back(make_im2col_geometry(testing::problem(text), 1));
  }
  for (ConvProblem p : testing::random_problems(testing::run_seed() + 22, 40)) {
    p.n = 1;
    cases.push_back(make_im2col_geometry(p, 1));
  }
  int checked = 0, strided = 0;
  for (const Im2colGeometry& g : cases) {
    if (g.out_h <= 0 || g.out_w <= 0 || g.channels <= 0) continue;
    const PaddedGrid grid = padded_grid(g);
    constexpr int64_t kImages = 2;
    const int64_t image_grid = padded_grid_elems(g, grid), pixels = col_pixels(g);
    std::vector<float> x(static_cast<std::size_t>(kImages * g.channels * plane_elems(g)));
    for (float& e : x) e = value(rng);
    std::vector<float> padded(static_cast<std::size_t>(kImages * image_grid + 64), 12345.0f);
    for (int64_t m = 0; m < kImages; ++m) {
      im2col::pad_into_grid(g, grid, x.data() + m * g.channels * plane_elems(g),
                            padded.data() + m * image_grid);
    }
    const int64_t plane = grid.plane;
    for (int64_t row = 0; row < col_rows(g); ++row) {
      const int64_t c = row / (g.kernel_h * g.kernel_w), tap = row % (g.kernel_h * g.kernel_w);
      for (int64_t pixel = 0; pixel < kImages * pixels; ++pixel) {
        const int64_t at =
            c * plane + grid_tap_offset(g, grid, tap) + grid_pixel_offset(g, grid, pixel);
        ASSERT_GE(at, 0);
        ASSERT_LT(at, kImages * image_grid) << describe(g) << " row " << row;
        const int64_t m = pixel / pixels;
        ASSERT_EQ(padded[static_cast<std::size_t>(at)],
                  im2col_element(g, x.data() + m * g.channels * plane_elems(g), row,
                                 pixel % pixels))
            << describe(g) << ", stride " << g.stride_h << "/" << g.stride_w << " row " << row
            << " pixel " << pixel;
      }
    }
    for (int64_t e = kImages * image_grid; e < kImages * image_grid + 64; ++e) {
      ASSERT_EQ(padded[e], 12345.0f) << describe(g);
    }
    // The offsets of a run of pixels, walked: the same as one by one, from any first pixel
    // and across the images' boundary.
    for (const int64_t begin : {int64_t{0}, g.out_w - 1, pixels - 1, pixels + 1}) {
      const int64_t count = kImages * pixels - std::min(begin, kImages * pixels);
      std::vector<int64_t> walked(static_cast<std::size_t>(count));
      grid_pixel_offsets(g, grid, begin, count, walked.data());
      for (int64_t k = 0; k < count; ++k) {
        ASSERT_EQ(walked[k], grid_pixel_offset(g, grid, begin + k))
            << describe(g) << " from pixel " << begin << ", pixel " << begin + k;
      }
    }
    ++checked;
    if (g.stride_h > 1 || g.stride_w > 1) ++strided;
  }
  EXPECT_GT(checked, 40);
  EXPECT_GE(strided, 4);
}

// Neighbouring rows share the padding both sides have, where the forward's columns leave room:
// a 3x3 kernel padded by 1 has rows of 29 for a 28-wide image and one extra column per output
// row; unpadded, or padded on one side, they share nothing; padding beyond the kernel shares
// only what the output rows leave beyond OW; a strided grid shares the right padding its taps
// read, if any. The reads of every sharing are checked above.
TEST(PaddedGrid, RowsShareThePaddingBothSidesHave) {
  struct Case {
    const char* problem;
    int64_t shared, width;
  };
  for (const Case& c : {Case{"mb1ic4ih28iw28oc4kh3kw3ph1pw1", 1, 29},
                        Case{"mb1ic4ih14iw14oc4kh5kw5ph2pw2", 2, 16},
                        Case{"mb1ic4ih14iw14oc4kh3kw3ph1pw0", 0, 14},
                        Case{"mb1ic4ih14iw14oc4kh3kw3ph0pw0", 0, 14},
                        Case{"mb1ic4ih9iw9oc4kh3kw3ph1pw1dw1", 1, 10},
                        Case{"mb1ic4ih6iw6oc4kh3kw3ph4pw4", 2, 12},
                        Case{"mb1ic4ih11iw11oc4kh3kw3sh2sw2ph1pw1", 1, 12},
                        Case{"mb1ic4ih12iw12oc4kh3kw3sh2sw2ph1pw1", 0, 13}}) {
    const Im2colGeometry g = make_im2col_geometry(testing::problem(c.problem), 1);
    const PaddedGrid grid = padded_grid(g);
    EXPECT_EQ(grid.shared, c.shared) << c.problem;
    EXPECT_EQ(grid.width, c.width) << c.problem;
    EXPECT_EQ(grid.plane, grid.height * grid.width + grid.shared) << c.problem;
  }
  const Im2colGeometry resnet = make_im2col_geometry(testing::problem(
                                                         "mb1ic4ih28iw28oc4kh3kw3ph1pw1"),
                                                     1);
  EXPECT_NEAR(grid_extra_share(resnet, padded_grid(resnet)), 27.0 / 784.0, 1e-12);
}

// A product over the grid columns, in blocks of any width (starting and ending inside output
// rows, or in their extra columns), copied out: each output pixel once, from its own grid
// column; the extra columns nowhere.
TEST(PaddedGrid, BlocksOfGridColumnsScatterEveryOutputOnce) {
  for (const Im2colGeometry& g : geometries()) {
    if (g.out_h <= 0 || g.out_w <= 0) continue;
    const PaddedGrid grid = padded_grid(g);
    const int64_t rows = 3, pixels = col_pixels(g);
    for (int64_t block : {int64_t{1}, int64_t{5}, grid.width - 1, grid.width, grid.width + 3,
                          int64_t{64}, grid.columns}) {
      if (block < 1) continue;
      std::vector<float> out(static_cast<std::size_t>(rows * pixels), -1.0f);
      for (int64_t q0 = 0; q0 < grid.columns; q0 += block) {
        const int64_t width = std::min(block, grid.columns - q0);
        // Row r of the block's product holds r * 1e6 + its grid column.
        std::vector<float> stage(static_cast<std::size_t>(rows * width));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t q = 0; q < width; ++q) stage[r * width + q] = float(r * 1000000 + q0 + q);
        im2col::scatter_grid_columns(g, grid, stage.data(), rows, q0, q0 + width, out.data());
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t oh = 0; oh < g.out_h; ++oh)
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            ASSERT_EQ(out[r * pixels + oh * g.out_w + ow], float(r * 1000000 + oh * grid.width + ow))
                << describe(g) << " block " << block << " row " << r << " output (" << oh << ", "
                << ow << ")";
          }
    }
  }
}

}  // namespace
}  // namespace convlab
