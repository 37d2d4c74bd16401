// The masked column buffer (lib/strategy/im2col_masked_columns.hpp) against the column
// buffer's definition: every row of it, at every output pixel, read in x at the row's offset
// where its tap's lane bit is set, and zero where it is clear, gives im2col_element's value, and
// a set bit never sends the read outside x; the masked depth order visits every row once, with
// runs of steps sharing their lane bits; and the filter it reorders (forward, and flipped for
// the transposed backward-data) holds the columns of that order.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "strategy/im2col_index.hpp"
#include "strategy/im2col_masked_columns.hpp"
#include "strategy/im2col_tap_classes.hpp"
#include "support/conv_tester.hpp"
#include "support/geometry_text.hpp"

namespace convlab {
namespace {

// Geometries whose output rows are as wide as their input's (OW = W): odd kernels padded by
// half the dilated kernel, an even one padded on one side, dilation, a one-pixel-wide image,
// rows taller than wide and wider than tall, groups, 1x1; and the transposed convolutions of
// their backward-data passes. Random problems where they happen to have the form.
std::vector<Im2colGeometry> geometries() {
  std::vector<Im2colGeometry> out;
  for (const char* text : {"mb1ic3ih9iw7oc2kh3kw3ph1pw1", "mb1ic2ih6iw10oc2kh5kw5ph2pw2",
                           "mb1ic2ih8iw5oc2kh3kw3ph2pw2dh1dw1", "mb1ic4ih5iw5oc4kh1kw3ph0pw1g2",
                           "mb1ic1ih1iw1oc1kh3kw3ph1pw1", "mb1ic2ih9iw1oc3kh3kw1ph1pw0",
                           "mb1ic3ih3iw40oc2kh3kw7ph1pw3", "mb1ic2ih7iw8oc2oh7ow8kh2kw2ph1pw1",
                           "mb1ic5ih12iw12oc5kh7kw7ph3pw3", "mb1ic2ih6iw6oc2kh1kw1ph0pw0",
                           "mb1ic33ih6iw19oc3kh5kw5ph2pw2"}) {
    const ConvProblem p = testing::problem(text);
    out.push_back(make_im2col_geometry(p, 1));
    out.push_back(transposed_geometry(p));
  }
  for (ConvProblem p : testing::random_problems(testing::run_seed() + 23, 200)) {
    p.n = 1;
    out.push_back(make_im2col_geometry(p, 1));
  }
  return out;
}

using testing::describe;

TEST(MaskedColumns, RowsAreTheColumnBuffersRows) {
  std::mt19937 rng(static_cast<uint32_t>(testing::run_seed()));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  int checked = 0;
  for (const Im2colGeometry& g : geometries()) {
    if (!has_masked_columns(g) || g.channels <= 0) {
      // Only stride 1 with OW = W has the form.
      EXPECT_TRUE(g.stride_h != 1 || g.stride_w != 1 || g.out_w != g.in_w || g.out_h <= 0 ||
                  g.channels <= 0)
          << describe(g);
      continue;
    }
    std::vector<float> x(static_cast<std::size_t>(g.channels * plane_elems(g)));
    for (float& e : x) e = value(rng);
    const int64_t words = masked_lane_words(g), pixels = col_pixels(g);
    std::vector<uint16_t> bits(static_cast<std::size_t>(g.kernel_h * g.kernel_w * words), 0xffff);
    masked_lane_bits(g, bits.data());
    for (int64_t row = 0; row < col_rows(g); ++row) {
      const int64_t offset = masked_tap_offset(g, row);
      const uint16_t* lanes = bits.data() + masked_lane_row(g, row);
      for (int64_t q = 0; q < words * 16; ++q) {
        const bool set = (lanes[q / 16] >> (q % 16) & 1u) != 0;
        if (q >= pixels) {
          ASSERT_FALSE(set) << describe(g) << " row " << row << " bit " << q << " past the pixels";
          continue;
        }
        const float want = im2col_element(g, x.data(), row, q);
        if (!set) {
          ASSERT_EQ(want, 0.0f) << describe(g) << " row " << row << " pixel " << q;
          continue;
        }
        ASSERT_GE(offset + q, 0) << describe(g) << " row " << row << " pixel " << q;
        ASSERT_LT(offset + q, static_cast<int64_t>(x.size())) << describe(g) << " row " << row;
        ASSERT_EQ(x[static_cast<std::size_t>(offset + q)], want)
            << describe(g) << " row " << row << " pixel " << q;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

// The depth order visits every column-buffer row once; within a block of channels the tap
// changes only after every channel of the block.
TEST(MaskedColumns, DepthOrderIsAPermutationInBlocks) {
  for (const Im2colGeometry& g : geometries()) {
    if (!has_masked_columns(g) || g.channels <= 0) continue;
    const int64_t taps = g.kernel_h * g.kernel_w;
    for (int64_t block : {int64_t{1}, int64_t{3}, g.channels, g.channels + 5}) {
      std::vector<int> seen(static_cast<std::size_t>(col_rows(g)), 0);
      int64_t changes = 0, previous_tap = -1;
      for (int64_t l = 0; l < col_rows(g); ++l) {
        const int64_t row = masked_depth_row(g, block, l);
        ASSERT_GE(row, 0);
        ASSERT_LT(row, col_rows(g)) << describe(g) << " block " << block << " step " << l;
        ++seen[static_cast<std::size_t>(row)];
        // Channel blocks in order: step l lies in block l / (block * taps).
        EXPECT_EQ(row / taps / block, l / (block * taps)) << describe(g) << " step " << l;
        if (row % taps != previous_tap) ++changes;
        previous_tap = row % taps;
      }
      for (int count : seen) ASSERT_EQ(count, 1) << describe(g) << " block " << block;
      // Each block runs its taps in order, so the tap changes at every step between them
      // (a 1x1 kernel's one tap never does).
      const int64_t blocks = (g.channels + block - 1) / block;
      EXPECT_EQ(changes, taps == 1 ? 1 : blocks * taps) << describe(g) << " block " << block;
    }
  }
}

// The reordered filter's row r, step l, is the filter's column masked_depth_row(l) of that
// row: w's own row forward; the flipped filter's (flip_filter_rows) for the transposed
// backward-data.
TEST(MaskedColumns, FilterRowsFollowTheDepthOrder) {
  for (const char* text : {"mb1ic6ih9oc4kh3ph1", "g2mb1ic8ih7oc6kh5ph2", "mb1ic5ih4iw4oc7kh1kw3pw1",
                           "g3mb1ic9ih6oc3kh3ph1dh1"}) {
    const ConvProblem p = testing::problem(text);
    std::vector<float> w(static_cast<std::size_t>(p.w_elems()));
    for (std::size_t e = 0; e < w.size(); ++e) w[e] = static_cast<float>(e);
    for (bool transposed : {false, true}) {
      const Im2colGeometry g = transposed ? transposed_geometry(p) : make_im2col_geometry(p, 1);
      const int64_t m = transposed ? p.c_per_group() : p.k_per_group(), rows = col_rows(g);
      std::vector<float> source = w;
      if (transposed) flip_filter_rows(p, w.data(), 0, p.groups * p.k_per_group(), source.data());
      for (int64_t block : {int64_t{1}, int64_t{2}, g.channels}) {
        std::vector<float> out(w.size(), -1.0f);
        const int64_t all = p.groups * m;
        // In two parts, as two threads write them.
        masked_filter_rows(p, g, transposed, block, w.data(), 0, all / 2, out.data());
        masked_filter_rows(p, g, transposed, block, w.data(), all / 2, all, out.data());
        for (int64_t r = 0; r < all; ++r) {
          for (int64_t l = 0; l < rows; ++l) {
            ASSERT_EQ(out[static_cast<std::size_t>(r * rows + l)],
                      source[static_cast<std::size_t>(r * rows + masked_depth_row(g, block, l))])
                << text << (transposed ? " transposed" : "") << " block " << block << " row " << r
                << " step " << l;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace convlab
