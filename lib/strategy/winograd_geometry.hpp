#pragma once
/// \file
/// The plan geometry of Winograd F(m x m, 3 x 3), shared by cpu.winograd and cuda.winograd:
/// the correlation a plan runs per group in source/destination terms, the tiles and the
/// chunk, the workspace formula and where each buffer lies in it. The derivation is at the
/// top of lib/cpu/winograd/cpu_winograd.cpp; docs/strategy-winograd.md has the formula.
///
/// Each buffer holds alpha^2 matrices, one per transform point, a point stride apart (floats;
/// pad = round up to `alignment` bytes, skew = the executor's point_skew_floats):
///   filter_point  = pad(rows Cs) + skew      U[xi] (forward, backward-data) or dU[xi]
///   input_point   = pad(Cs chunk) + skew     V[xi]
///   product_point = pad(Cd chunk) + skew     M[xi] (forward, backward-data) or P[xi]
/// rows = filter_rows: all Cd destination channels (U whole, transformed once per group), or,
/// when the executor asks for filter blocks (the CPU), a block of them that each worker
/// transforms for every chunk, so that U never leaves the cache (backward-filter: only when
/// the tiles are one chunk, since dU sums over the chunks, and that chunk was not grown to
/// dU's size, gradient_chunk_filter_percent). Where the tiles are one chunk, the
/// workers share that chunk's transforms and split the blocks of rows instead of taking
/// chunks, so that each block of U is transformed once, not once per worker.
/// Workspace (bytes, in this order):
///   library   the executor's library scratch (cuBLAS's workspace on the GPU, 0 on the CPU)
///   filter    filter_buffers x 4 pad(alpha^2 filter_point)   one, or one block per worker
///   per input buffer w < input_buffers (one per worker, or one the workers share):
///     input   4 pad(alpha^2 input_point)
///     product 4 pad(alpha^2 product_point)
///   partials  (workers - 1) filter            bwd-filter over several chunks: a private dU
///                                             per worker past the first
/// (with a skew of whole alignments, as both executors use, the outer pads change nothing).
///
/// The CONVLAB_HD helpers are plain int64_t math, so kernels take the layout by value.

#include <cstddef>
#include <cstdint>
#include <string>

#include "convlab/error.hpp"
#include "convlab/problem.hpp"
#include "strategy/hd.hpp"
#include "strategy/winograd_transform.hpp"

namespace convlab::winograd {

/// The correlation a plan runs per group, in source/destination terms: forward reads x and
/// writes y; backward-data reads dy and writes dx (the flipped filter, padding 2 - p);
/// backward-filter reads x and tiles dy (its "destination" is the tile grid of dy).
struct WinogradLayout {
  int m = 4;                           ///< output tile (F(m x m, 3 x 3))
  int alpha = 6;                       ///< input tile m + 2
  int64_t src_channels = 0;            ///< per group: C/g (forward, bwd_filter) or K/g (bwd_data)
  int64_t dst_channels = 0;            ///< per group: K/g (forward, bwd_filter) or C/g (bwd_data)
  int64_t src_total = 0;               ///< all groups' source channels (C, or K for bwd_data)
  int64_t dst_total = 0;               ///< all groups' destination channels
  int64_t src_h = 0, src_w = 0;        ///< source image size
  int64_t dst_h = 0, dst_w = 0;        ///< destination (tiled) image size
  int64_t offset_h = 0, offset_w = 0;  ///< dst row 0's first tap reads source row -offset
  int64_t tiles_h = 0, tiles_w = 0;    ///< ceil(dst / m)
  int64_t tiles = 0;                   ///< per group: images * tiles_h * tiles_w
  int64_t chunk = 0;                   ///< tiles transformed and multiplied together
  int64_t chunks = 0;                  ///< ceil(tiles / chunk)
  int64_t filter_rows = 0;             ///< destination channels per U: all, or a block
  int64_t filter_buffers = 1;          ///< U buffers: 1, or one block per worker
  int64_t filter_point = 0;            ///< floats from U[xi] to U[xi + 1]: pad(rows Cs) + skew
  int64_t input_point = 0;             ///< floats from V[xi] to V[xi + 1]: pad(Cs chunk) + skew
  int64_t product_point = 0;           ///< floats from M[xi] to M[xi + 1]: pad(Cd chunk) + skew
  int64_t filter_floats = 0;           ///< alpha^2 * filter_point, padded to the alignment
  int64_t input_floats = 0;            ///< alpha^2 * input_point, padded
  int64_t product_floats = 0;          ///< alpha^2 * product_point, padded
  /// Executors: taking whole chunks, min(workers, chunks); or, in blocks over one chunk,
  /// sharing it and taking blocks of U's (dU's) rows, min(workers, blocks).
  int64_t workers = 1;
  int64_t input_buffers = 1;  ///< sets of V and M/P: one per worker, or 1 shared
  int64_t partials = 0;       ///< private dUs: workers - 1 for bwd_filter over chunks, else 0
  int64_t library_bytes = 0;           ///< the executor's library scratch, first
  int64_t filter_offset = 0;           ///< bytes: the library scratch rounded to the alignment
  std::size_t workspace_bytes = 0;     ///< filter_offset + 4 (filter (buffers + partials) +
                                       ///< input_buffers (input + product))
};

/// Tiles per chunk when the `tiles` knob is auto on the CPU: as many as keep the chunk's
/// transformed input and products within this many bytes (cache-sized), at least
/// kWinogradCpuMinChunk (one 64-column panel of the CPU's per-point GEMM; 128 ran slower on
/// ResNet-50's 28x28 and 14x14 layers, docs/strategy-winograd.md), at most all tiles.
inline constexpr int64_t kWinogradCpuChunkBytes = int64_t{2} << 20;
inline constexpr int64_t kWinogradCpuMinChunk = 64;
/// Floats (one 64-byte cache line) the CPU adds between consecutive transform points'
/// matrices: with a power-of-two matrix (64 channels x 128 tiles = 32 KiB) the alpha^2
/// streams a tile transform reads or writes would all fall into the same cache set.
inline constexpr int64_t kWinogradCpuPointSkew = 16;
/// The same on the GPU: GEMMs thousands of tiles wide, so that each of the alpha^2 products
/// of a chunk fills the device (a choice, not a measurement: no GPU has run it yet).
inline constexpr int64_t kWinogradGpuChunkBytes = int64_t{64} << 20;
inline constexpr int64_t kWinogradMinChunk = 32;

/// What the executor decides.
struct WinogradOptions {
  int m = 4;                                     ///< 2 or 4
  int64_t chunk = 0;                             ///< tiles per chunk; 0: auto
  int64_t chunk_bytes = kWinogradCpuChunkBytes;  ///< auto's target for one chunk's V and M
  int64_t workers = 1;                           ///< threads taking whole chunks (CPU)
  int64_t alignment = 64;                        ///< buffer alignment in bytes (power of two >= 4)
  int64_t library_bytes = 0;                     ///< library scratch placed first (cuBLAS)
  int64_t point_skew_floats = 0;                 ///< floats added after each point's matrix
  int64_t min_chunk = kWinogradMinChunk;         ///< auto's fewest tiles per chunk (>= 1)
  int64_t chunk_multiple = 1;     ///< auto rounds the chunk down to a multiple of this (>= 1)
  bool chunk_per_worker = false;  ///< auto: at most ceil(tiles / workers), a chunk each
  /// Backward-filter, auto, where dU is larger than gradient_chunk_min_filter_bytes: the
  /// chunks' V and P may take up to this many hundredths of dU's bytes where that is more than
  /// chunk_bytes (0: chunk_bytes alone), the tiles dealt evenly to as few chunks as that
  /// allows, a multiple of the workers with chunk_per_worker. Every chunk's GEMMs read and
  /// write the whole of dU, so chunks much smaller than a dU out of cache spend more on dU than
  /// on their tiles; the workspace then scales with the filter, still not with the batch.
  /// Such a chunk takes no filter blocks, even where it holds every tile.
  int64_t gradient_chunk_filter_percent = 0;
  int64_t gradient_chunk_min_filter_bytes = 0;
  /// Destination channels per filter block: 0 keeps U whole; otherwise each worker transforms
  /// U in blocks of this many rows (at most Cd) per chunk (backward-filter: if one chunk). An
  /// auto chunk that would hold every tile then stays whole (not cut per worker), and the
  /// workers share it.
  int64_t filter_rows = 0;
  /// Auto, in filter blocks: tiles up to this many are one chunk, shared by the workers, even
  /// where that chunk is larger than chunk_bytes allows (0: only tiles within one auto chunk).
  /// Each block re-reads the chunk's V, so this bounds the chunk, not the workers' shares.
  int64_t block_chunk_tiles = 0;
};

/// Tile index within the group -> (image, tile row, tile column).
CONVLAB_HD void winograd_locate(const WinogradLayout& l, int64_t tile, int64_t* n, int64_t* th,
                                int64_t* tw) {
  const int64_t per_image = l.tiles_h * l.tiles_w;
  *n = tile / per_image;
  *th = tile % per_image / l.tiles_w;
  *tw = tile % l.tiles_w;
}

/// Byte offsets of the buffers in the workspace.
CONVLAB_HD int64_t winograd_input_offset(const WinogradLayout& l, int64_t worker) {
  return l.filter_offset +
         4 * (l.filter_buffers * l.filter_floats + worker * (l.input_floats + l.product_floats));
}
/// Worker w's U: the one U, or its own filter block.
CONVLAB_HD int64_t winograd_filter_offset(const WinogradLayout& l, int64_t worker) {
  return l.filter_offset + 4 * (l.filter_buffers > 1 ? worker : 0) * l.filter_floats;
}
CONVLAB_HD int64_t winograd_product_offset(const WinogradLayout& l, int64_t worker) {
  return winograd_input_offset(l, worker) + 4 * l.input_floats;
}
/// Backward-filter worker w > 0's private dU (worker 0 uses the filter buffer).
CONVLAB_HD int64_t winograd_partial_offset(const WinogradLayout& l, int64_t worker) {
  return winograd_input_offset(l, l.input_buffers) + 4 * (worker - 1) * l.filter_floats;
}

/// The layout of (problem, pass) under `options`. Throws Error{invalid_argument} for bad
/// options, Error{invalid_problem} for sizes that overflow int64_t.
inline WinogradLayout winograd_layout(const ConvProblem& p, Pass pass,
                                      const WinogradOptions& options) {
  const int64_t align = options.alignment;
  if ((options.m != 2 && options.m != 4) || options.chunk < 0 || options.chunk_bytes < 1 ||
      options.workers < 1 || align < 4 || (align & (align - 1)) != 0 || options.library_bytes < 0 ||
      options.point_skew_floats < 0 || options.min_chunk < 1 || options.chunk_multiple < 1 ||
      options.filter_rows < 0 || options.gradient_chunk_filter_percent < 0 ||
      options.gradient_chunk_min_filter_bytes < 0 || options.block_chunk_tiles < 0) {
    throw Error(ErrorCode::invalid_argument,
                "winograd_layout " + p.descriptor() + ": bad options (m " +
                    std::to_string(options.m) + ", chunk " + std::to_string(options.chunk) +
                    ", workers " + std::to_string(options.workers) + ", alignment " +
                    std::to_string(align) + ", point skew " +
                    std::to_string(options.point_skew_floats) + ", min chunk " +
                    std::to_string(options.min_chunk) + ", chunk multiple " +
                    std::to_string(options.chunk_multiple) + ", filter rows " +
                    std::to_string(options.filter_rows) + ", gradient chunk " +
                    std::to_string(options.gradient_chunk_filter_percent) + " % of dU past " +
                    std::to_string(options.gradient_chunk_min_filter_bytes) +
                    " B, block chunk tiles " + std::to_string(options.block_chunk_tiles) + ")");
  }
  const int64_t align_floats = align / 4;
  auto pad = [&](int64_t floats) {
    return checked_add(floats, align_floats - 1, "winograd workspace") / align_floats *
           align_floats;
  };
  WinogradLayout l;
  l.m = options.m;
  l.alpha = options.m + 2;
  const bool data = pass == Pass::backward_data;
  l.src_channels = data ? p.k_per_group() : p.c_per_group();
  l.dst_channels = data ? p.c_per_group() : p.k_per_group();
  l.src_total = data ? p.k : p.c;
  l.dst_total = data ? p.c : p.k;
  l.src_h = data ? p.out_h() : p.h;
  l.src_w = data ? p.out_w() : p.w;
  l.dst_h = data ? p.h : p.out_h();
  l.dst_w = data ? p.w : p.out_w();
  l.offset_h = data ? 2 - p.pad_h : p.pad_h;
  l.offset_w = data ? 2 - p.pad_w : p.pad_w;
  l.tiles_h = tiles_along(l.dst_h, l.m);
  l.tiles_w = tiles_along(l.dst_w, l.m);
  const int64_t points = int64_t{l.alpha} * l.alpha;
  l.tiles = checked_mul(checked_mul(p.n, l.tiles_h, "tiles"), l.tiles_w, "tiles");
  const bool want_blocks = options.filter_rows > 0 && options.filter_rows < l.dst_channels;
  int64_t chunk = options.chunk;
  bool gradient_sized = false;
  if (chunk == 0) {
    const int64_t per_tile = checked_mul(
        4 * points, checked_add(l.src_channels, l.dst_channels, "channels"), "bytes per tile");
    chunk = options.chunk_bytes / per_tile / options.chunk_multiple * options.chunk_multiple;
    if (chunk < options.min_chunk) chunk = options.min_chunk;
    // Tiles that fit one chunk (or block_chunk_tiles) stay one, so that the workers split U's
    // (dU's) blocks over it: cut per worker, each worker would transform every block of U for
    // its own chunk (backward-filter: sum a private dU).
    const bool one_block_chunk =
        want_blocks && (chunk >= l.tiles || l.tiles <= options.block_chunk_tiles);
    if (one_block_chunk) chunk = l.tiles;
    const int64_t filter_bytes =
        checked_mul(checked_mul(4 * points, l.src_channels, "filter transform"), l.dst_channels,
                    "filter transform");
    if (pass == Pass::backward_filter && options.gradient_chunk_filter_percent > 0 &&
        filter_bytes > options.gradient_chunk_min_filter_bytes && !one_block_chunk) {
      int64_t by_filter =
          checked_mul(filter_bytes, options.gradient_chunk_filter_percent, "chunk per filter") /
          100 / per_tile;
      if (by_filter < options.min_chunk) by_filter = options.min_chunk;
      if (by_filter > chunk) {
        int64_t chunks = (l.tiles + by_filter - 1) / by_filter;
        if (options.chunk_per_worker) {
          chunks = (chunks + options.workers - 1) / options.workers * options.workers;
        }
        chunk = (l.tiles + chunks - 1) / chunks;
        gradient_sized = true;
      }
    }
    if (options.chunk_per_worker && !one_block_chunk) {
      const int64_t share = (l.tiles + options.workers - 1) / options.workers;
      if (chunk > share) chunk = share;
    }
  }
  l.chunk = chunk < l.tiles ? chunk : l.tiles;
  l.chunks = (l.tiles + l.chunk - 1) / l.chunk;
  const int64_t skew = options.point_skew_floats;
  // Backward-filter sums dU over the chunks: in blocks only when there is one chunk, and not
  // in a chunk sized by dU (blocks would read all of its V once per block).
  const bool blocks =
      want_blocks && (pass != Pass::backward_filter || (l.chunks == 1 && !gradient_sized));
  l.filter_rows = blocks ? options.filter_rows : l.dst_channels;
  l.filter_point = checked_add(pad(checked_mul(l.filter_rows, l.src_channels, "filter transform")),
                               skew, "filter transform");
  l.input_point = checked_add(pad(checked_mul(l.src_channels, l.chunk, "input transform")), skew,
                              "input transform");
  l.product_point =
      checked_add(pad(checked_mul(l.dst_channels, l.chunk, "products")), skew, "products");
  l.filter_floats = pad(checked_mul(points, l.filter_point, "filter transform"));
  l.input_floats = pad(checked_mul(points, l.input_point, "input transform"));
  l.product_floats = pad(checked_mul(points, l.product_point, "products"));
  const bool shared = blocks && l.chunks == 1;
  const int64_t units = shared ? (l.dst_channels + l.filter_rows - 1) / l.filter_rows : l.chunks;
  l.workers = options.workers < units ? options.workers : units;
  l.input_buffers = shared ? 1 : l.workers;
  l.filter_buffers = blocks ? l.workers : 1;
  l.partials = pass == Pass::backward_filter && !shared ? l.workers - 1 : 0;
  l.library_bytes = options.library_bytes;
  l.filter_offset =
      checked_add(options.library_bytes, align - 1, "winograd workspace") / align * align;
  const int64_t floats =
      checked_add(checked_mul(l.filter_floats, l.filter_buffers + l.partials, "winograd workspace"),
                  checked_mul(l.input_buffers,
                              checked_add(l.input_floats, l.product_floats, "winograd workspace"),
                              "winograd workspace"),
                  "winograd workspace");
  l.workspace_bytes = static_cast<std::size_t>(checked_add(
      l.filter_offset, checked_mul(4, floats, "winograd workspace"), "winograd workspace"));
  return l;
}

}  // namespace convlab::winograd
