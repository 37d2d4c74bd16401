// The plan geometry of strategy/winograd_geometry.hpp, shared by cpu.winograd and
// cuda.winograd, checked against the definition rather than against itself: the tiles cover
// every destination element exactly once, a tile's patch holds every source element the
// definition reads for its outputs, the buffers do not overlap and sit on the alignment, each
// transform point's matrix has its own aligned stretch (with the executor's skew after it), the
// auto chunk follows the executor's rules, and bad options are refused by name.
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

// Buffers in order, aligned, not overlapping (each spans its 36 point matrices, the last one
// ending 35 point strides after the first begins), and the workspace their end: with a library
// scratch, workers and (backward-filter) their private partials.
TEST(WinogradGeometry, BuffersAreAlignedAndDisjoint) {
  const ConvProblem p = problem("g2mb4ic6ih15oc10kh3ph1");
  for (Pass pass : all_passes()) {
    for (int64_t align : {64, 256}) {
      for (int64_t filter_rows : {0, 2}) {  // backward-filter: several chunks, so no blocks
        WinogradOptions o;
        o.chunk = 7;
        o.workers = 3;
        o.alignment = align;
        o.library_bytes = 1000;
        o.filter_rows = filter_rows;
        const WinogradLayout l = winograd::winograd_layout(p, pass, o);
        EXPECT_EQ(l.workers, 3);
        EXPECT_EQ(l.partials, pass == Pass::backward_filter ? 2 : 0);
        const bool blocks = filter_rows > 0 && pass != Pass::backward_filter;
        EXPECT_EQ(l.filter_buffers, blocks ? 3 : 1);
        EXPECT_EQ(l.filter_rows, blocks ? 2 : l.dst_channels);
        EXPECT_GE(l.filter_offset, 1000);
        auto span = [](int64_t point, int64_t matrix) { return 4 * (35 * point + matrix); };
        const int64_t filter_span = span(l.filter_point, 5 * 3);
        int64_t end = l.filter_offset;
        // The one U, or one block of filter_rows rows per worker.
        for (int64_t w = 0; w < l.filter_buffers; ++w) {
          EXPECT_EQ(winograd::winograd_filter_offset(l, w) % align, 0);
          EXPECT_GE(winograd::winograd_filter_offset(l, w), end);
          end = winograd::winograd_filter_offset(l, w) +
                span(l.filter_point, l.filter_rows * l.src_channels);
        }
        for (int64_t w = 0; w < l.workers; ++w) {
          const int64_t in = winograd::winograd_input_offset(l, w);
          const int64_t out = winograd::winograd_product_offset(l, w);
          EXPECT_EQ(in % align, 0);
          EXPECT_EQ(out % align, 0);
          EXPECT_GE(in, end);
          EXPECT_GE(out, in + span(l.input_point, l.src_channels * l.chunk));
          end = out + span(l.product_point, l.dst_channels * l.chunk);
        }
        for (int64_t w = 1; w <= l.partials; ++w) {
          EXPECT_GE(winograd::winograd_partial_offset(l, w), end);
          end = winograd::winograd_partial_offset(l, w) + filter_span;
        }
        EXPECT_GE(static_cast<int64_t>(l.workspace_bytes), end);
        EXPECT_LT(static_cast<int64_t>(l.workspace_bytes), end + align);
      }
    }
  }
}

// alpha^2 matrices per buffer, a point stride apart: each starts on the alignment, holds its
// channels x chunk floats and then at least the skew before the next, and the last ends inside
// the buffer.
TEST(WinogradGeometry, TransformPointsHaveAlignedStridesWithTheSkew) {
  const ConvProblem p = problem("g2mb3ic6ih15oc10kh3ph1");
  for (Pass pass : all_passes()) {
    for (int64_t skew : {0, 16, 64}) {
      for (int m : {2, 4}) {
        WinogradOptions o;
        o.m = m;
        o.chunk = 7;
        o.alignment = 64;
        o.point_skew_floats = skew;
        const WinogradLayout l = winograd::winograd_layout(p, pass, o);
        const int64_t points = int64_t{l.alpha} * l.alpha, kc = 5 * 3;
        const struct {
          int64_t point, matrix, floats;
        } buffers[] = {{l.filter_point, kc, l.filter_floats},
                       {l.input_point, l.src_channels * l.chunk, l.input_floats},
                       {l.product_point, l.dst_channels * l.chunk, l.product_floats}};
        for (const auto& b : buffers) {
          EXPECT_EQ((b.point - skew) % 16, 0) << to_string(pass) << " skew " << skew;
          EXPECT_GE(b.point - skew, b.matrix);
          EXPECT_LT(b.point - skew, b.matrix + 16);
          EXPECT_GE(b.floats, points * b.point);
          EXPECT_EQ(b.floats % 16, 0);
        }
      }
    }
  }
  // With 36 points of 15 filters: 16 floats each, 32 with a cache line of skew.
  WinogradOptions skewed;
  skewed.point_skew_floats = 16;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, skewed).filter_point, 32);
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, skewed).filter_floats, 36 * 32);
}

// Auto chunks: chunk_bytes / (4 alpha^2 (Cs + Cd)) tiles rounded down to chunk_multiple, at
// least min_chunk, at most all tiles, and with chunk_per_worker at most ceil(tiles / workers);
// a forced chunk is kept.
TEST(WinogradGeometry, AutoChunkFollowsTheExecutorsRules) {
  const ConvProblem p = problem("mb4ic8ih40oc8kh3ph1");  // 4 * 10 * 10 = 400 F(4,3) tiles
  WinogradOptions o;
  o.chunk_bytes = 4 * 36 * 16 * 50;  // 50 tiles
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 50);
  o.chunk_multiple = 16;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 48);
  o.chunk_multiple = 1;
  o.min_chunk = 128;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 128);
  o.chunk_per_worker = true;
  o.workers = 3;  // ceil(400 / 3) = 134: the minimum stands
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 128);
  o.workers = 8;  // 50 each: every worker gets a chunk
  const WinogradLayout spread = winograd::winograd_layout(p, Pass::forward, o);
  EXPECT_EQ(spread.chunk, 50);
  EXPECT_EQ(spread.workers, 8);
  o.chunk_per_worker = false;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).workers, 4);  // ceil(400 / 128)
  o.chunk = 300;  // forced: no minimum, no share
  o.chunk_per_worker = true;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 300);
  o.chunk = 1000;  // at most all tiles
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 400);
}

// Backward-filter's auto chunk grows to gradient_chunk_filter_percent of dU's bytes where dU is
// past gradient_chunk_min_filter_bytes: the tiles dealt evenly to as few chunks as that allows
// (a multiple of the workers with chunk_per_worker), and such a chunk takes no filter blocks.
TEST(WinogradGeometry, GradientChunksGrowWithTheFilter) {
  const ConvProblem p = problem("mb4ic32ih40oc32kh3ph1");  // 400 F(4,3) tiles
  const int64_t per_tile = 4 * 36 * 64, filter_bytes = 4 * 36 * 32 * 32;
  WinogradOptions o;
  o.chunk_bytes = 10 * per_tile;
  o.min_chunk = 1;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::backward_filter, o).chunk, 10);
  o.gradient_chunk_filter_percent = 200;  // V and P of 2 dU: 32 tiles, so 13 chunks of 31
  const WinogradLayout sized = winograd::winograd_layout(p, Pass::backward_filter, o);
  EXPECT_EQ(sized.chunk, 31);
  EXPECT_EQ(sized.chunks, 13);
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 10);  // sums no dU
  o.workers = 3;
  o.chunk_per_worker = true;  // 15 chunks of 27: five per worker
  const WinogradLayout dealt = winograd::winograd_layout(p, Pass::backward_filter, o);
  EXPECT_EQ(dealt.chunk, 27);
  EXPECT_EQ(dealt.chunks, 15);
  EXPECT_EQ(dealt.partials, 2);
  o.gradient_chunk_filter_percent = 250;  // 2.5 dU: 40 tiles, so 10 chunks, 12 with 3 workers
  const WinogradLayout fraction = winograd::winograd_layout(p, Pass::backward_filter, o);
  EXPECT_EQ(fraction.chunk, 34);
  EXPECT_EQ(fraction.chunks, 12);
  o.gradient_chunk_filter_percent = 50;  // 8 tiles, fewer than the chunk bytes' 10: those
  EXPECT_EQ(winograd::winograd_layout(p, Pass::backward_filter, o).chunk, 10);
  o.gradient_chunk_filter_percent = 200;
  o.gradient_chunk_min_filter_bytes = filter_bytes;  // dU within it: the chunk bytes alone
  EXPECT_EQ(winograd::winograd_layout(p, Pass::backward_filter, o).chunk, 10);
  o.gradient_chunk_min_filter_bytes = 0;
  o.workers = 1;
  o.chunk_per_worker = false;
  o.filter_rows = 8;  // every tile in one chunk sized by dU: no blocks
  o.gradient_chunk_filter_percent = 10000;
  const WinogradLayout whole = winograd::winograd_layout(p, Pass::backward_filter, o);
  EXPECT_EQ(whole.chunks, 1);
  EXPECT_EQ(whole.filter_rows, 32);
  o.gradient_chunk_filter_percent = 0;  // one chunk by the chunk bytes: blocks
  o.chunk_bytes = 400 * per_tile;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::backward_filter, o).filter_rows, 8);
}

// In filter blocks, tiles up to block_chunk_tiles are one chunk the workers share, past the
// chunk bytes and the per-worker share; without blocks, or past it, the auto chunk stands.
TEST(WinogradGeometry, BlockChunkTilesKeepFewTilesOneChunk) {
  const ConvProblem p = problem("mb4ic32ih40oc32kh3ph1");  // 400 F(4,3) tiles
  WinogradOptions o;
  o.chunk_bytes = 4 * 36 * 64 * 100;  // 100 tiles
  o.min_chunk = 1;
  o.workers = 2;
  o.chunk_per_worker = true;
  o.filter_rows = 8;
  o.block_chunk_tiles = 399;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 100);
  o.block_chunk_tiles = 400;
  const WinogradLayout one = winograd::winograd_layout(p, Pass::forward, o);
  EXPECT_EQ(one.chunk, 400);
  EXPECT_EQ(one.chunks, 1);
  EXPECT_EQ(one.workers, 2);  // the 4 blocks of 8 rows
  EXPECT_EQ(one.input_buffers, 1);
  EXPECT_EQ(one.filter_rows, 8);
  o.filter_rows = 0;  // U whole: no reason to hold the tiles together
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 100);
  o.filter_rows = 8;
  o.chunk = 50;  // the knob's chunk stands
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, o).chunk, 50);
}

TEST(WinogradGeometry, BadOptionsAreRefusedByName) {
  const ConvProblem p = problem("mb1ic2ih9oc2kh3ph1");
  WinogradOptions m3;
  m3.m = 3;
  WinogradOptions odd;
  odd.alignment = 48;
  WinogradOptions none;
  none.workers = 0;
  WinogradOptions negative_skew;
  negative_skew.point_skew_floats = -16;
  WinogradOptions no_minimum;
  no_minimum.min_chunk = 0;
  WinogradOptions negative_rows;
  negative_rows.filter_rows = -1;
  WinogradOptions no_multiple;
  no_multiple.chunk_multiple = 0;
  WinogradOptions negative_ratio;
  negative_ratio.gradient_chunk_filter_percent = -1;
  WinogradOptions negative_floor;
  negative_floor.gradient_chunk_min_filter_bytes = -1;
  WinogradOptions negative_block_chunk;
  negative_block_chunk.block_chunk_tiles = -1;
  for (const WinogradOptions& o :
       {m3, odd, none, negative_skew, no_minimum, negative_rows, no_multiple, negative_ratio,
        negative_floor, negative_block_chunk}) {
    try {
      winograd::winograd_layout(p, Pass::forward, o);
      ADD_FAILURE() << "accepted m " << o.m << " alignment " << o.alignment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(p.descriptor()), std::string::npos) << e.what();
    }
  }
  // Backward-filter sums dU over the chunks: filter blocks only when the tiles are one chunk
  // (3 x 3 tiles here).
  WinogradOptions blocks;
  blocks.filter_rows = 1;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::backward_filter, blocks).filter_rows, 1);
  blocks.chunk = 2;
  EXPECT_EQ(winograd::winograd_layout(p, Pass::backward_filter, blocks).filter_rows, 2);
  EXPECT_EQ(winograd::winograd_layout(p, Pass::forward, blocks).filter_rows, 1);
}

}  // namespace
}  // namespace convlab
