#pragma once
/// \file
/// The geometry of tiled FFT convolution, shared by cpu.fft_tiled and cuda.fft_tiled.
///
/// The forward output grid OH x OW is cut into tiles of Th x Tw outputs (the last ones along
/// an axis may hang over the edge; their outer outputs are computed and dropped). Along one
/// axis (S stride, P pad, Rd = (R-1)D + 1 the dilated kernel), tile t holds outputs
/// o = t*T + j (j < T) and reads the input patch of
///
///   patch = (T-1)*S + Rd   rows, from input row  origin(t) = t*T*S - P,
///
/// because output o reads rows o*S - P + u*D (u < R). Every pass is then the same pass of an
/// unpadded sub-problem on the patches: n' = pairs (image, tile) per batch, h' = patch_h,
/// w' = patch_w, pad 0, the problem's kernel, stride, dilation and groups, whose output is
/// exactly Th x Tw. Per pass:
///
///   forward          y tile   = fwd(x patch, w)              tiles partition y: a copy
///   backward-data    dx patch = bwd_data(dy tile, w)         patches overlap: dx is the SUM
///                                                            of the patches (overlap-add)
///   backward-filter  dw       = sum over pairs bwd_filter(x patch, dy tile)
///                              (the sub-problem already sums over its n' pairs; batches add)
///
/// An axis that needs a single tile (T >= its outputs) is not cut at all ("whole"): the
/// sub-problem keeps that axis's input size and its start and end padding, and its patch is
/// the input itself, so along it the transform is exactly cpu.fft's (which may let the two
/// paddings share wrapped slots) instead of the explicitly padded (O-1)*S + Rd.
///
/// Gathering a patch reads x (or dy) with zeros outside the tensor: input rows < 0 are the
/// top padding, rows >= used (fft_used_inputs: E = (OH-1)S + Rd - P, clamped to H) meet no
/// tap of a kept output, so they are read as zeros too and dx rows there stay exact zeros, as
/// in the untiled FFT; dy rows >= OH (the overhang of the last tile) are zeros. Why this is
/// exact: a kept output o reads patch rows j*S + u*D < patch, and every input row it reads is
/// either a real row below E or padding, which the gather fills with the same zero.
///
/// The FFT of the sub-problem is sized by the patch, not the image, so the transform size and
/// with it every spectrum is bounded by the tile: that is the point of tiling (the untiled FFT
/// pads every filter to the whole image). The default tile makes the patch about four dilated
/// kernels wide (transform edge ~4 Rd, so the recomputed overlap costs at most ~(4/3)^2 in
/// transform work and products), and the default batch makes the per-batch input and output
/// spectra about as large as the filter spectra (up to 4x while that stays cheap, at least
/// kTiledFftMinBatch pairs): the
/// workspace stays about twice the filter spectra, and the filter transform, redone per batch,
/// costs less than the batch's own (only its R rows go through the row pass). Both are knobs.
///
/// Workspace (bytes, each buffer at an `alignment` boundary, in this order):
///   patches   4 * batch * C  * patch_h * patch_w      x patches (fwd, bwd_filter) or dx
///                                                      patches (bwd_data)
///   tiles     4 * batch * K  * Th * Tw                 y tiles (fwd out, bwd inputs)
///   partial   4 * K * C/g * R * S   (bwd_filter, more than one batch: a batch's dw)
///   fft       the executor's FFT workspace for the sub-problem with n' = batch
///
/// The CONVLAB_HD helpers are pure int64_t math, so CUDA kernels take the axes by value.

#include <cmath>
#include <cstdint>
#include <string>

#include "convlab/accuracy.hpp"
#include "convlab/error.hpp"
#include "convlab/problem.hpp"
#include "strategy/fft_geometry.hpp"
#include "strategy/hd.hpp"

namespace convlab {

/// One axis of the tiling.
struct TiledFftAxis {
  int64_t tile = 1;     ///< T: outputs per tile
  int64_t tiles = 1;    ///< ceil(outputs / T)
  int64_t patch = 1;    ///< (T-1)*S + Rd: input rows of one tile (whole: the input size)
  int64_t stride = 1;   ///< S
  int64_t pad = 0;      ///< P (start side)
  bool whole = false;   ///< one tile, not cut: the sub-problem keeps the size and padding
  int64_t used = 0;     ///< input rows that meet a kept output (fft_used_inputs)
  int64_t outputs = 1;  ///< OH (or OW)
};

/// Input row of patch row `j` of tile `t`, or -1 where the gather reads a zero (padding, or
/// a row that meets no kept output).
CONVLAB_HD int64_t tiled_fft_input_index(const TiledFftAxis& a, int64_t t, int64_t j) {
  const int64_t i = a.whole ? j : t * a.tile * a.stride - a.pad + j;
  return i >= 0 && i < a.used ? i : -1;
}

/// The tiles whose patch holds input row `i` (0 <= i < the input size): [*first, *last],
/// empty (first > last) when none does. The gather form of overlap-add: a dx element sums
/// the patch rows i - origin(t) of these tiles, with no atomics and in tile order.
CONVLAB_HD void tiled_fft_tiles_covering(const TiledFftAxis& a, int64_t i, int64_t* first,
                                         int64_t* last) {
  if (a.whole) {
    *first = 0;
    *last = i < a.used ? 0 : -1;
    return;
  }
  if (i >= a.used) {
    *first = 0;
    *last = -1;
    return;
  }
  // origin(t) = t*step - pad <= i < origin(t) + patch
  const int64_t step = a.tile * a.stride, shifted = i + a.pad;
  const int64_t below = shifted - a.patch + 1;  // t*step >= below
  int64_t f = below <= 0 ? 0 : (below + step - 1) / step;
  int64_t l = shifted / step;
  if (l > a.tiles - 1) l = a.tiles - 1;
  *first = f;
  *last = l;
}

/// Row of tile `t`'s patch that holds input row `i` (when t covers it).
CONVLAB_HD int64_t tiled_fft_patch_row(const TiledFftAxis& a, int64_t t, int64_t i) {
  return a.whole ? i : i - (t * a.tile * a.stride - a.pad);
}

/// Output row of tile row `j` of tile `t`, or -1 where it is the overhang of the last tile.
CONVLAB_HD int64_t tiled_fft_output_index(const TiledFftAxis& a, int64_t t, int64_t j) {
  const int64_t o = t * a.tile + j;
  return o < a.outputs ? o : -1;
}

/// The fewest pairs the default batch holds: with few channels (depthwise) the filter rule
/// alone would run one small transform at a time.
constexpr int64_t kTiledFftMinBatch = 8;

/// The x and y spectra a default batch may hold for the filter transform's sake alone.
constexpr int64_t kTiledFftCheapBatchBytes = int64_t{8} << 20;

/// The pairs [first, first + count) of one FFT batch.
struct TiledBatch {
  int64_t first = 0, count = 0;
};

/// The tile of pair q (pairs are image-major: q = n * tiles + tile, tile = th * tiles_w + tw).
struct TiledFftPair {
  int64_t image = 0, th = 0, tw = 0;
};

/// What the executor decides.
struct TiledFftOptions {
  int64_t tile = 0;   ///< output tile edge (both axes, capped by the output); 0: from the kernel
  int64_t batch = 0;  ///< (image, tile) pairs per FFT batch; 0: from the channels
  int64_t alignment = 256;
};

/// Everything an executor needs to run one pass of one problem by tiled FFT, but the FFT of
/// the sub-problem itself (the executor plans it on tiled_fft_subproblem()).
struct TiledFftGeometry {
  Pass pass = Pass::forward;
  TiledFftAxis h, w;
  int64_t tiles = 1;                         ///< tiles per image: h.tiles * w.tiles
  int64_t pairs = 1;                         ///< N * tiles
  int64_t batch = 1;                         ///< pairs per FFT batch (<= pairs)
  int64_t batches = 1;                       ///< ceil(pairs / batch)
  int64_t last_batch = 1;                    ///< pairs in the last batch
  int64_t transform_h = 1, transform_w = 1;  ///< the sub-problem's FFT size (for reports)
  FftBuffer patches, tiles_buffer, partial, fft;
  int64_t total_bytes = 0;
};

/// The pair q of a geometry.
CONVLAB_HD TiledFftPair tiled_fft_pair(const TiledFftGeometry& g, int64_t q) {
  TiledFftPair p;
  p.image = q / g.tiles;
  const int64_t t = q % g.tiles;
  p.th = t / g.w.tiles;
  p.tw = t % g.w.tiles;
  return p;
}

/// The default output tile edge for a dilated kernel extent `rd` and stride `s`: the patch
/// is the smallest even smooth transform edge >= 4 * rd (at least 8), minus the kernel.
/// tiled_fft_geometry() then balances it: ceil(outputs / tiles) for the tiles it needs.
inline int64_t tiled_fft_default_tile(int64_t rd, int64_t s) {
  const int64_t target = fft_next_smooth(4 * rd < 8 ? 8 : 4 * rd, /*even=*/true);
  return (target - rd) / s + 1;
}

/// The sub-problem the FFT runs per batch of `pairs` (image, tile) pairs: unpadded along cut
/// axes, the problem's own size and padding along whole ones.
inline ConvProblem tiled_fft_subproblem(const ConvProblem& p, const TiledFftGeometry& g,
                                        int64_t pairs) {
  ConvProblem sub = p;
  sub.n = pairs;
  if (!g.h.whole) {
    sub.h = g.h.patch;
    sub.pad_h = 0;
    sub.pad_h_end = std::nullopt;
  }
  if (!g.w.whole) {
    sub.w = g.w.patch;
    sub.pad_w = 0;
    sub.pad_w_end = std::nullopt;
  }
  return sub;
}

namespace tiled_fft_detail {
inline TiledFftAxis axis(int64_t size, int64_t pad, int64_t stride, int64_t rd, int64_t outputs,
                         int64_t tile, bool balance) {
  TiledFftAxis a;
  a.tile = tile < outputs ? tile : outputs;
  a.tiles = (outputs + a.tile - 1) / a.tile;
  // The default tile is shrunk to share the outputs evenly among as many tiles: the last tile
  // then hangs over the edge by less than one output per tile instead of computing up to a
  // whole tile of dropped outputs (11 outputs in tiles of 10 would cost 2 full tiles; in tiles
  // of 6, 2 smaller ones).
  if (balance) a.tile = (outputs + a.tiles - 1) / a.tiles;
  a.whole = a.tiles == 1;
  a.patch =
      a.whole ? size : checked_add(checked_mul(a.tile - 1, stride, "tile patch"), rd, "tile patch");
  a.stride = stride;
  a.pad = pad;
  a.used = fft_used_inputs(size, pad, stride, rd, outputs);
  a.outputs = outputs;
  return a;
}
}  // namespace tiled_fft_detail

/// The tiling of one pass, before the FFT workspace is known (fft.bytes = 0, total_bytes
/// without it). Throws Error{invalid_problem} for an invalid problem or sizes that overflow
/// int64_t, Error{invalid_argument} for a negative tile, batch or a bad alignment.
inline TiledFftGeometry tiled_fft_geometry(const ConvProblem& p, Pass pass,
                                           const TiledFftOptions& options = {}) {
  p.validate();
  const int64_t align = options.alignment;
  if (options.tile < 0 || options.batch < 0 || align < 1 || (align & (align - 1)) != 0) {
    throw Error(ErrorCode::invalid_argument,
                "tiled_fft_geometry " + p.descriptor() + ": bad options (tile " +
                    std::to_string(options.tile) + ", batch " + std::to_string(options.batch) +
                    ", alignment " + std::to_string(align) + ")");
  }
  TiledFftGeometry g;
  g.pass = pass;
  const int64_t th =
      options.tile > 0 ? options.tile : tiled_fft_default_tile(p.dilated_r(), p.stride_h);
  const int64_t tw =
      options.tile > 0 ? options.tile : tiled_fft_default_tile(p.dilated_s(), p.stride_w);
  const bool balance = options.tile == 0;
  g.h = tiled_fft_detail::axis(p.h, p.pad_h, p.stride_h, p.dilated_r(), p.out_h(), th, balance);
  g.w = tiled_fft_detail::axis(p.w, p.pad_w, p.stride_w, p.dilated_s(), p.out_w(), tw, balance);
  g.tiles = checked_mul(g.h.tiles, g.w.tiles, "tiles");
  g.pairs = checked_mul(p.n, g.tiles, "(image, tile) pairs");

  // One image-tile of the sub-problem: its transform size and bins.
  const FftGeometry one = fft_geometry(tiled_fft_subproblem(p, g, 1), pass);
  g.transform_h = one.h.size;
  g.transform_w = one.w.size;
  int64_t batch = options.batch;
  if (batch == 0) {
    // x and y spectra of a batch ~ the filter spectra: batch * (C + K) ~ K C/g. Where that
    // is small in bytes (few channels, small tiles) the filter transform, redone per batch,
    // would cost as much as the batch's own: batches then grow towards 4x (the filter a fifth
    // of the transforms) while their spectra stay within kTiledFftCheapBatchBytes.
    const int64_t filter_planes = checked_mul(p.k, p.c_per_group(), "filter planes");
    const int64_t per_pair = checked_add(p.c, p.k, "planes per pair");
    batch = (filter_planes + per_pair - 1) / per_pair;
    const int64_t pair_bytes =
        checked_mul(checked_mul(per_pair, one.bins, "pair spectra"), 8, "pair spectra");
    int64_t amortised = checked_mul(4, batch, "batch");
    const int64_t cheap = kTiledFftCheapBatchBytes / pair_bytes;
    if (amortised > cheap) amortised = cheap;
    if (batch < amortised) batch = amortised;
    if (batch < kTiledFftMinBatch) batch = kTiledFftMinBatch;
  }
  g.batch = batch < g.pairs ? batch : g.pairs;
  g.batches = (g.pairs + g.batch - 1) / g.batch;
  g.last_batch = g.pairs - (g.batches - 1) * g.batch;

  int64_t offset = 0;
  auto place = [&](FftBuffer& buffer, int64_t floats) {
    offset = checked_add(offset, align - 1, "tiled FFT workspace") / align * align;
    buffer = {offset, checked_mul(floats, 4, "tiled FFT workspace")};
    offset = checked_add(offset, buffer.bytes, "tiled FFT workspace");
  };
  const int64_t patch = checked_mul(g.h.patch, g.w.patch, "patch");
  const int64_t tile = checked_mul(g.h.tile, g.w.tile, "tile");
  place(g.patches, checked_mul(checked_mul(g.batch, p.c, "patches"), patch, "patches"));
  place(g.tiles_buffer, checked_mul(checked_mul(g.batch, p.k, "tiles"), tile, "tiles"));
  const bool partial = pass == Pass::backward_filter && g.batches > 1;
  place(g.partial, partial ? checked_mul(checked_mul(p.k, p.c_per_group(), "partial"),
                                         checked_mul(p.r, p.s, "partial"), "partial")
                           : 0);
  place(g.fft, 0);
  g.total_bytes = offset;
  return g;
}

/// Places the executor's FFT workspace (`fft_bytes`, for the full batch's sub-problem) after
/// the tiling's buffers and sets total_bytes.
inline void tiled_fft_set_fft_bytes(TiledFftGeometry& g, int64_t fft_bytes) {
  if (fft_bytes < 0) {
    throw Error(ErrorCode::invalid_argument,
                "tiled FFT: negative FFT workspace " + std::to_string(fft_bytes));
  }
  g.fft.bytes = fft_bytes;
  g.total_bytes = checked_add(g.fft.offset, fft_bytes, "tiled FFT workspace");
}

/// How many patches cover one input row at most, along one axis: the overlap that the error
/// bound of the tiled FFT carries (tiles start T*S rows apart and span `patch` rows).
CONVLAB_HD int64_t tiled_fft_overlap(const TiledFftAxis& a) {
  if (a.whole) return 1;
  const int64_t step = a.tile * a.stride;
  return (a.patch + step - 1) / step;
}

/// The normwise bound of a tiling, given the untiled FFT's factor per pair (derivation in
/// lib/cpu/fft_tiled/cpu_fft_tiled.cpp, step 5): pair_factor * sqrt(overlap), plus the
/// batches' partial sums in backward-filter, at the tile transform's size.
inline ErrorBound tiled_fft_error_bound(const TiledFftGeometry& g, double pair_factor) {
  ErrorBound bound;
  bound.kind = ErrorBound::Kind::normwise;
  bound.log2_size = std::log2(static_cast<double>(g.transform_h) * g.transform_w);
  const double overlap =
      static_cast<double>(tiled_fft_overlap(g.h)) * static_cast<double>(tiled_fft_overlap(g.w));
  bound.factor = pair_factor * std::sqrt(overlap);
  if (g.pass == Pass::backward_filter && bound.log2_size > 0) {
    bound.factor += static_cast<double>(g.batches - 1) / bound.log2_size;
  }
  return bound;
}

}  // namespace convlab
