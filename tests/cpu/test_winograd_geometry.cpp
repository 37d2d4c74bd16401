// The plan geometry of strategy/winograd_geometry.hpp, shared by cpu.winograd and
// cuda.winograd, checked against the definition rather than against itself: the tiles cover
// every destination element exactly once, a tile's patch holds every source element the
// definition reads for its outputs, the buffers do not overlap and sit on the alignment, and
// bad options are refused by name.
#include <gtest/gtest.h>

#include <vector>

#include "convlab/error.hpp"
#include "strategy/winograd_geometry.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::problem;
using winograd::WinogradLayout;
using winograd::WinogradOptions;

// Every destination element lies in exactly one tile, and every tap the definition reads for
// it (the correlation of the pass: forward reads x[o + i - pad], backward-data dy[o + pad - i]
// as the flipped filter at offset 2 - pad) lies in that tile's alpha x alpha patch.
TEST(WinogradGeometry, TilesCoverTheDestinationAndPatchesHoldTheTaps) {
  for (const char* d : {"mb2ic3ih7oc5kh3ph1", "mb1ic1ih4oc1kh3ph3", "mb1ic2ih9iw11oc3kh3kw3ph2",
                        "mb1ic3ih8oc2kh3oh7ph1", "g2mb3ic4ih10oc6kh3ph0"}) {
    const ConvProblem p = problem(d);
    for (Pass pass : {Pass::forward, Pass::backward_data}) {
      for (int m : {2, 4}) {
        WinogradOptions o;
        o.m = m;
        const WinogradLayout l = winograd::winograd_layout(p, pass, o);
        std::vector<int> covered(static_cast<size_t>(p.n * l.dst_h * l.dst_w), 0);
        for (int64_t t = 0; t < l.tiles; ++t) {
          int64_t n = 0, th = 0, tw = 0;
          winograd::winograd_locate(l, t, &n, &th, &tw);
          ASSERT_LT(n, p.n);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < m; ++j) {
              const int64_t h = th * m + i, w = tw * m + j;
              if (h >= l.dst_h || w >= l.dst_w) continue;
              ++covered[static_cast<size_t>((n * l.dst_h + h) * l.dst_w + w)];
              for (int64_t a = 0; a < 3; ++a) {  // the tap rows the definition reads
                const int64_t src = pass == Pass::forward ? h + a - p.pad_h : h + p.pad_h - a;
                const int64_t row = src - (th * m - l.offset_h);
                EXPECT_TRUE(row >= 0 && row < l.alpha) << d << " " << to_string(pass) << " m " << m;
              }
            }
          }
        }
        for (int c : covered) ASSERT_EQ(c, 1) << d << " " << to_string(pass) << " m " << m;
      }
    }
  }
}

// Buffers in order, aligned, not overlapping, and the workspace their end: with a library
// scratch, workers and (backward-filter) their private partials.
TEST(WinogradGeometry, BuffersAreAlignedAndDisjoint) {
  const ConvProblem p = problem("g2mb4ic6ih15oc10kh3ph1");
  for (Pass pass : all_passes()) {
    for (int64_t align : {64, 256}) {
      WinogradOptions o;
      o.chunk = 7;
      o.workers = 3;
      o.alignment = align;
      o.library_bytes = 1000;
      const WinogradLayout l = winograd::winograd_layout(p, pass, o);
      EXPECT_EQ(l.workers, 3);
      EXPECT_EQ(l.partials, pass == Pass::backward_filter ? 2 : 0);
      EXPECT_GE(l.filter_offset, 1000);
      int64_t end = l.filter_offset + 4 * l.filter_floats;
      for (int64_t w = 0; w < l.workers; ++w) {
        const int64_t in = winograd::winograd_input_offset(l, w);
        const int64_t out = winograd::winograd_product_offset(l, w);
        EXPECT_EQ(in % align, 0);
        EXPECT_EQ(out % align, 0);
        EXPECT_GE(in, end);
        EXPECT_GE(out, in + 4 * 36 * l.src_channels * l.chunk);
        end = out + 4 * 36 * l.dst_channels * l.chunk;
      }
      for (int64_t w = 1; w <= l.partials; ++w) {
        EXPECT_GE(winograd::winograd_partial_offset(l, w), end);
        end = winograd::winograd_partial_offset(l, w) + 4 * 36 * 5 * 3;
      }
      EXPECT_GE(static_cast<int64_t>(l.workspace_bytes), end);
      EXPECT_LT(static_cast<int64_t>(l.workspace_bytes), end + align);
    }
  }
}

TEST(WinogradGeometry, BadOptionsAreRefusedByName) {
  const ConvProblem p = problem("mb1ic2ih9oc2kh3ph1");
  WinogradOptions m3;
  m3.m = 3;
  WinogradOptions odd;
  odd.alignment = 48;
  WinogradOptions none;
  none.workers = 0;
  for (const WinogradOptions& o : {m3, odd, none}) {
    try {
      winograd::winograd_layout(p, Pass::forward, o);
      ADD_FAILURE() << "accepted m " << o.m << " alignment " << o.alignment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(p.descriptor()), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace convlab
