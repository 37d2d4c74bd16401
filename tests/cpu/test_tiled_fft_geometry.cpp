// The tiling of strategy/tiled_fft_geometry.hpp, shared by cpu.fft_tiled and cuda.fft_tiled,
// checked against the definition of convolution rather than against itself: tiles cover
// every output once, a tile's outputs read only its patch, a kept patch row is the input
// row the definition reads, and the workspace is bounded by the tile.
#include <gtest/gtest.h>

#include <vector>

#include "strategy/tiled_fft_geometry.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::problem;

std::vector<ConvProblem> corpus() {
  std::vector<ConvProblem> out = testing::edge_cases();
  for (const ConvProblem& p : testing::random_problems(testing::run_seed(), 200)) out.push_back(p);
  return out;
}

// Along one axis with the tile knob `tile`: every output o in exactly one tile, every
// (output, tap) of the definition inside that tile's patch at the row the gather fills.
void check_axis(const ConvProblem& p, const TiledFftAxis& a, int64_t size, int64_t pad,
                int64_t stride, int64_t dilation, int64_t taps, int64_t outputs) {
  std::vector<int> covered(static_cast<size_t>(outputs), 0);
  for (int64_t t = 0; t < a.tiles; ++t) {
    for (int64_t j = 0; j < a.tile; ++j) {
      const int64_t o = tiled_fft_output_index(a, t, j);
      if (o < 0) {
        EXPECT_GE(t * a.tile + j, outputs) << p.descriptor();
        continue;
      }
      ++covered[static_cast<size_t>(o)];
      for (int64_t u = 0; u < taps; ++u) {
        // The sub-problem's row: unpadded along a cut axis, padded as the problem along a
        // whole one (where the sub-problem's own padding supplies the zeros).
        const int64_t row = j * stride - (a.whole ? pad : 0) + u * dilation;
        const int64_t i = o * stride - pad + u * dilation;  // the definition
        if (row < 0 || row >= a.patch) {
          EXPECT_TRUE(a.whole && (i < 0 || i >= size)) << p.descriptor() << " row " << row;
          continue;
        }
        const int64_t gathered = tiled_fft_input_index(a, t, row);
        if (i >= 0 && i < size) {
          EXPECT_EQ(gathered, i) << p.descriptor() << " tile " << t << " row " << row;
        } else {
          EXPECT_EQ(gathered, -1) << p.descriptor() << " reads padding as a zero";
        }
      }
    }
  }
  for (int64_t o = 0; o < outputs; ++o) EXPECT_EQ(covered[static_cast<size_t>(o)], 1) << o;
  // The gather form of overlap-add: the tiles covering input row i are exactly those whose
  // patch gathers it, at the row tiled_fft_patch_row names.
  for (int64_t i = 0; i < size; ++i) {
    int64_t first = 0, last = -1;
    tiled_fft_tiles_covering(a, i, &first, &last);
    for (int64_t t = 0; t < a.tiles; ++t) {
      bool gathers = false;
      for (int64_t j = 0; j < a.patch; ++j) {
        if (tiled_fft_input_index(a, t, j) == i) {
          gathers = true;
          EXPECT_EQ(tiled_fft_patch_row(a, t, i), j) << p.descriptor() << " row " << i;
        }
      }
      EXPECT_EQ(gathers, t >= first && t <= last)
          << p.descriptor() << " row " << i << " tile " << t;
    }
  }
  EXPECT_EQ(a.whole, a.tiles == 1);
  EXPECT_EQ(a.patch, a.whole ? size : (a.tile - 1) * stride + (taps - 1) * dilation + 1);
  EXPECT_LE(a.tile, outputs);
  EXPECT_GE(tiled_fft_overlap(a), 1);
}

TEST(TiledFftGeometry, TilesCoverEveryOutputOnceAndReadOnlyTheirPatch) {
  int checked = 0;
  for (const ConvProblem& p : corpus()) {
    for (int64_t tile : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{1000}}) {
      TiledFftOptions o;
      o.tile = tile;
      const TiledFftGeometry g = tiled_fft_geometry(p, Pass::forward, o);
      SCOPED_TRACE(p.descriptor() + " tile " + std::to_string(tile));
      check_axis(p, g.h, p.h, p.pad_h, p.stride_h, p.dilation_h, p.r, p.out_h());
      check_axis(p, g.w, p.w, p.pad_w, p.stride_w, p.dilation_w, p.s, p.out_w());
      const ConvProblem sub = tiled_fft_subproblem(p, g, g.batch);
      EXPECT_NO_THROW(sub.validate());
      EXPECT_EQ(sub.out_h(), g.h.tile);
      EXPECT_EQ(sub.out_w(), g.w.tile);
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(TiledFftGeometry, PairsAreImageMajorAndBatchesCoverThemAll) {
  const ConvProblem p = problem("mb3ic2ih20oc4kh3");
  TiledFftOptions o;
  o.tile = 5;
  o.batch = 7;
  const TiledFftGeometry g = tiled_fft_geometry(p, Pass::forward, o);
  EXPECT_EQ(g.h.tiles, 4);  // 18 outputs in tiles of 5
  EXPECT_EQ(g.tiles, 16);
  EXPECT_EQ(g.pairs, 48);
  EXPECT_EQ(g.batches, 7);
  EXPECT_EQ(g.last_batch, 48 - 6 * 7);
  const TiledFftPair q = tiled_fft_pair(g, 16 + 6);
  EXPECT_EQ(q.image, 1);
  EXPECT_EQ(q.th, 1);
  EXPECT_EQ(q.tw, 2);
}

// The point of tiling: the workspace does not grow with the image, only with the tile.
TEST(TiledFftGeometry, WorkspaceIsBoundedByTheTileNotTheImage) {
  for (Pass pass : all_passes()) {
    TiledFftOptions o;
    o.tile = 16;
    o.batch = 8;
    const TiledFftGeometry small = tiled_fft_geometry(problem("mb8ic8ih64oc8kh5ph2"), pass, o);
    const TiledFftGeometry large = tiled_fft_geometry(problem("mb8ic8ih512oc8kh5ph2"), pass, o);
    EXPECT_EQ(small.patches.bytes, large.patches.bytes) << to_string(pass);
    EXPECT_EQ(small.tiles_buffer.bytes, large.tiles_buffer.bytes) << to_string(pass);
    EXPECT_EQ(small.transform_h, large.transform_h) << to_string(pass);
    EXPECT_GT(large.tiles, small.tiles);
    // patches: batch * C * 20 * 20 floats; tiles: batch * K * 16 * 16 floats.
    EXPECT_EQ(large.patches.bytes, 4 * 8 * 8 * 20 * 20);
    EXPECT_EQ(large.tiles_buffer.bytes, 4 * 8 * 8 * 16 * 16);
    EXPECT_EQ(large.partial.bytes, pass == Pass::backward_filter ? 4 * 8 * 8 * 25 : 0);
  }
}

TEST(TiledFftGeometry, DefaultTileFollowsTheKernel) {
  // patch = smallest even smooth size >= 4 Rd (at least 8), tile = patch - Rd + 1 at stride 1.
  EXPECT_EQ(tiled_fft_default_tile(3, 1), 12 - 3 + 1);
  EXPECT_EQ(tiled_fft_default_tile(9, 1), 36 - 9 + 1);
  EXPECT_EQ(tiled_fft_default_tile(11, 1), 48 - 11 + 1);
  EXPECT_EQ(tiled_fft_default_tile(1, 1), 8);
  EXPECT_EQ(tiled_fft_default_tile(7, 2), (28 - 7) / 2 + 1);
  // 92 outputs in tiles of at most 28: 4 tiles, balanced to 23 outputs, patch 31, FFT 32.
  const TiledFftGeometry g = tiled_fft_geometry(problem("mb2ic3ih100oc4kh9"), Pass::forward);
  EXPECT_EQ(g.h.tiles, 4);
  EXPECT_EQ(g.h.tile, 23);
  EXPECT_EQ(g.h.patch, 31);
  EXPECT_EQ(g.transform_h, 32);
  // A tile given as a knob is kept (capped by the output), overhang and all.
  TiledFftOptions o;
  o.tile = 28;
  EXPECT_EQ(tiled_fft_geometry(problem("mb2ic3ih100oc4kh9"), Pass::forward, o).h.tile, 28);
}

TEST(TiledFftGeometry, DefaultBatchFollowsTheChannels) {
  // K C / (C + K) pairs: 64 * 32 / 96 = 21.3 -> 22, when their spectra are large.
  const TiledFftGeometry big = tiled_fft_geometry(problem("mb64ic256ih64oc256kh9"), Pass::forward);
  // 256 * 256 / 512 = 128; 4x (512 pairs of 512 planes of 684 bins) would be far over 8 MiB.
  EXPECT_EQ(big.batch, 128);
  // Small spectra (62 outputs in 7 tiles of 9, patch 11, FFT 12x12: 84 bins, 96 planes per
  // pair, 64512 bytes): 4 x 22 = 88 pairs fit in the 8 MiB (130 pairs) allowed for that.
  const TiledFftGeometry g = tiled_fft_geometry(problem("mb64ic32ih64oc64kh3"), Pass::forward);
  EXPECT_EQ(g.transform_h, 12);
  EXPECT_EQ(g.batch, 88);
  // Depthwise: the floor.
  const TiledFftGeometry d = tiled_fft_geometry(problem("g16mb64ic16ih64oc16kh3"), Pass::forward);
  EXPECT_EQ(d.batch, kTiledFftMinBatch);
}

TEST(TiledFftGeometry, BadOptionsAndInvalidProblemsAreNamedErrors) {
  const ConvProblem p = problem("mb2ic3ih9oc4kh3");
  TiledFftOptions o;
  o.tile = -1;
  try {
    tiled_fft_geometry(p, Pass::forward, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("tile -1"), std::string::npos) << e.what();
  }
  TiledFftGeometry g = tiled_fft_geometry(p, Pass::forward);
  EXPECT_THROW(tiled_fft_set_fft_bytes(g, -5), Error);
  ConvProblem invalid = p;
  invalid.r = 20;  // larger than the padded input
  try {
    tiled_fft_geometry(invalid, Pass::forward);
    FAIL() << "invalid problem accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_problem) << e.what();
  }
}

}  // namespace
}  // namespace convlab
