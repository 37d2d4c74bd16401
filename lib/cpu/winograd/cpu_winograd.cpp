// cpu.winograd: Winograd minimal filtering F(m x m, 3 x 3), m = 2 or 4, on the CPU, all three
// passes, for stride-1, dilation-1, 3x3 layers (any padding, groups).
//
// Derivation. One group; Cs source channels, Cd destination channels. The destination image
// is cut into m x m tiles (ceil(H/m) x ceil(W/m) per image; a tile sticking out past the edge
// computes outputs that are dropped). Tile t at destination (th*m, tw*m) reads the alpha x
// alpha source patch starting at (th*m - offset_h, tw*m - offset_w), alpha = m + 2, with zeros
// outside the image. With the transforms of strategy/winograd_transform.hpp,
//   U[xi][k][c] = (G w[k,c] G^T)[xi],   V[xi][c][t] = (B^T d[c,t] B)[xi],
//   M[xi][k][t] = sum_c U[xi][k][c] V[xi][c][t]      (one GEMM per transform point xi)
//   y[k, tile t] = A^T M[.][k][t] A,
// alpha^2 GEMMs of Cd x Cs x T instead of 9 Cd Cs multiply-adds per output: the multiplies per
// output fall from 9 to alpha^2/m^2 = 4 (F(2,3)) or 2.25 (F(4,3)).
//   forward          source x, destination y, offset = pad, U from w[k, c]
//   backward-data    dx[c, h] = sum_{k,i} dy[k, h + p - i] w[k, c, i] is the correlation of dy
//                    with the 180-degree rotated filter, channels swapped: source dy,
//                    destination dx, offset = 2 - pad (negative for pad > 2: the patch starts
//                    inside dy), U[xi][c][k] from rot180(w[k, c]). End paddings need nothing:
//                    tiles cover dx and the gather zero-fills outside dy.
//   backward-filter  the adjoint of the forward map in w (winograd_transform.hpp):
//                    dU[xi][k][c] = sum_{n,t} (A dY[k,t] A^T)[xi] V[xi][c][t], one GEMM per xi
//                    with the tiles as inner dimension, accumulated over chunks (beta = 1),
//                    then dw[k, c] = G^T dU[.][k][c] G. dY tiles are the m x m tiles of dy,
//                    zero past its edge; V is the forward input transform of x.
// GEMM mapping (row-major), all on the unpacked GEMM (cpu/gemm_kernels/unpacked_sgemm.hpp: a
// BLAS sgemm would pack U, the larger operand when channels are many, for every chunk):
// forward/backward-data M[xi] = U[xi] (Cd x Cs) * V[xi] (Cs x T); backward-filter dU[xi]
// (Kg x Cg) += P[xi] (Kg x T) * Vt[xi] (T x Cg), where Vt = V^T is what its input transform
// writes in V's place (through a staging buffer of 16 channels per run of tiles, transposed
// while in cache), since the unpacked GEMM wants B's columns contiguous.
//
// Filter blocks. A whole U is alpha^2 Cd Cs floats: 36 MiB on a 512-channel layer, written by
// the filter transform and read back by the GEMMs from memory (the transform's stores were
// half its profile). Past kWinogradCpuWholeFilterBytes (knob `filter_rows`), where no worker
// runs more than one chunk, each worker instead transforms U a block of destination rows at a
// time, right before that block's GEMMs: the block stays in cache. With several chunks per
// worker, blocks would repeat the transform for every chunk and re-read the chunk's V for
// every block, which cost more than U's trip to memory and back; but a few tiles more than
// one chunk (cpu_winograd_block_chunk_tiles: up to two panels and a vector on one thread,
// three panels on more) are one chunk in blocks, where chunks of 64 and a short rest read all
// of U from memory for each and leave a worker idle. Backward-filter sums dU over the chunks,
// so it takes blocks only when the tiles are one chunk: each block of dU then goes to dw (the
// adjoint transform) from cache.
//
// Chunks and workspace (floats, pad16 = round up to 16 for 64-byte alignment; the formula is
// strategy/winograd_geometry.hpp's, shared with cuda.winograd). The tiles of all images of one
// group are taken `chunk` at a time (knob `tiles`; auto keeps the chunk's V and M within
// kWinogradCpuChunkBytes, in multiples of 64 tiles, but takes at least kWinogradCpuMinChunk
// tiles and at most ceil(tiles / T); in filter blocks, all of at most 144 tiles on one thread,
// 192 on more (forward, backward-data; backward-filter 192 on more than one thread, not on AMD
// CPUs); backward-filter, where dU is past kWinogradCpuGradientChunkMinFilterBytes, up to
// cpu_winograd_gradient_chunk_percent() % of dU's bytes in even chunks, a multiple of T: every
// chunk reads and writes all of dU), so the
// workspace is bounded by the chunk, not the batch:
//   filter  = alpha^2 (pad16(rows Cs) + 16)   U (forward, backward-data) or dU (backward-filter);
//             rows = Cd, or a block (then one filter buffer per worker)
//   input   = alpha^2 (pad16(Cs chunk) + 16)  V
//   product = alpha^2 (pad16(Cd chunk) + 16)  M (forward, backward-data) or P (backward-filter)
//   (+ 16 = kWinogradCpuPointSkew: one cache line between the points' matrices, so that a
//   tile transform's 36 streams do not share a cache set when the matrix is a power-of-two
//   size; the per-point GEMMs step by these point strides)
//   workers = min(T, chunks); in blocks over one chunk: min(T, blocks of U's or dU's rows)
//   staging = backward-filter: alpha^2 (16 * 64 + 16), one worker's staging buffer; else 0
//   bytes   = 4 (workers staging + filter (buffers + partials) + inputs (input + product)),
//             partials = workers - 1 for backward-filter over chunks (a private dU each),
//             else 0; inputs = workers, or 1 in blocks over one chunk (shared)
//
// Threads (T = convlab::num_threads() at plan time, OpenMP). Each worker runs whole chunks
// (transforms and GEMMs, the GEMMs single-threaded) in its own V and M/P: one fork and join
// per group, where splitting every stage of every chunk cost three (on a loaded 2-core VM
// those barriers made two threads 3-7x slower than one). Forward and backward-data deal the
// chunks in turn to whichever worker is free; a chunk's operations do not depend on who runs
// it, so their results are bitwise independent of T and of the order; in blocks over one
// chunk the workers share its transforms and each takes an even share of U's rows in blocks
// (a row's products do not depend on its block): independent of T too. Backward-filter gives
// each worker a contiguous run of chunks summed into its own dU, added in worker order:
// deterministic for a fixed T (as cpu.im2col); in blocks (one chunk) the workers share its
// transforms and each takes an even share of dU's rows, each row summed over all tiles:
// independent of T.
//
// Error bound (normwise per output plane, accuracy.hpp). Each stage is a short fixed sum, so
// the standard componentwise analysis of a chain of products bounds one tile's error by
// gamma_L times the computation on absolute values, with L the longest chain of roundings:
// 2 alpha (input transform) + 2 (3 + 1) (filter transform, +1 per stage for G's rounded
// entries) + 1 (product) + Cs (channel sum) + 2 alpha (output transform) = 4 alpha + 9 + Cs;
// backward-filter: 2 m + 2 alpha + 1 + N tiles + chunks (sum over tiles, beta = 1 per chunk) +
// T (the workers' partials) + 2 (alpha + 1). winograd_transform.hpp turns that into
// ||E_tile|| <= gamma_L beta(m) sum_c ||g_c|| ||d_c,tile||. Over a plane, Minkowski and
// Cauchy-Schwarz sum the tiles, and an input lies in at most 2 x 2 patches (alpha <= 2m), so
// ||E_plane|| <= 2 beta gamma_L sum_c ||w_c||
// ||x_c|| (backward-filter: sum_n ||dy_n,k|| ||x_n,c||, its dY tiles do not overlap). As for
// cpu.im2col, gamma_L is taken in Higham & Mary's probabilistic form 6 sqrt(L) u (rounding
// errors of random sign; fails with probability < 3e-8 per chain); 3 u more covers the
// reference's own rounding (||y|| <= ||x|| ||w||_1 <= 3 ||x|| ||w||). No fitted constant.
// The bound is strategy/winograd_host.hpp's winograd_error_bound, shared with cuda.winograd.

#include "cpu_winograd.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>

#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cpu/gemm_kernels/transpose.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "cpu/isa.hpp"
#include "strategy/winograd_geometry.hpp"
#include "strategy/winograd_host.hpp"
#include "strategy/winograd_transform.hpp"
#include "tile_kernels.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace convlab::winograd {
namespace {

constexpr const char* kName = "cpu.winograd";

// Runs body(i) for i in [0, count) on `threads` OpenMP threads, static schedule; the first
// exception is rethrown after the region (none may leave it).
template <class Body>
void parallel_for(int64_t count, int threads, Body body) {
  if (threads <= 1) {  // inside a worker, or one thread: no region to fork and join
    for (int64_t i = 0; i < count; ++i) body(i);
    return;
  }
  std::exception_ptr failure;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (int64_t i = 0; i < count; ++i) {
    try {
      body(i);
    } catch (...) {
#ifdef _OPENMP
#pragma omp critical(convlab_winograd_failure)
#endif
      if (!failure) failure = std::current_exception();
    }
  }
  (void)threads;
  if (failure) std::rethrow_exception(failure);
}

template <int M>
class WinogradPlan final : public Plan {
  static constexpr int kAlpha = Tile<M>::alpha, kPoints = Tile<M>::points;

 public:
  WinogradPlan(const ConvProblem& p, Pass pass, WinogradLayout layout, bool stream_gradient,
               int threads, CpuIsa isa)
      : p_(p),
        pass_(pass),
        l_(layout),
        staging_point_(cpu_winograd_staging_point(pass)),
        stream_gradient_(stream_gradient),
        threads_(threads),
        isa_(isa),
        kernels_(tile_kernels(isa)) {
    describe_winograd_plan(l_, info_, "input_staging");
    info_.kernel = std::string("winograd tiles + unpacked gemm, ") + to_string(isa);
    info_.details.emplace_back("isa", to_string(isa_));
    if (pass_ == Pass::backward_filter) {
      info_.details.emplace_back("gradient_stores", stream_gradient_ ? "streamed" : "cached");
      info_.details.emplace_back(
          "gradient_chunk_limit",
          std::to_string(cpu_winograd_gradient_chunk_percent()) + "% of dU past " +
              std::to_string(kWinogradCpuGradientChunkMinFilterBytes) + " B");
    }
  }

  std::size_t workspace_bytes() const override { return l_.workspace_bytes; }
  // The bound of this plan's variant: F(4,3)'s transforms grow the error more than F(2,3)'s.
  ErrorBound error_bound() const override { return cpu_winograd_error_bound(p_, pass_, M); }

 protected:
  void execute(const Tensors& t, const Workspace& ws, Stream) override {
    check_run_arguments(kName, p_, pass_, t, ws, l_.workspace_bytes);
    char* base = static_cast<char*>(ws.data);
    float* u = reinterpret_cast<float*>(base + l_.filter_offset);
    const int64_t chunks = l_.chunks;
    // Worker w's transformed input and products; backward-filter workers w > 0 also have a
    // private dU after all of them (worker 0 accumulates into u itself).
    auto buffers = [&](int64_t w) {
      return reinterpret_cast<float*>(base + winograd_input_offset(l_, w));
    };
    auto partial = [&](int64_t w) {
      return reinterpret_cast<float*>(base + winograd_partial_offset(l_, w));
    };
    // Backward-filter worker w's staging buffer for its input transforms, in the library
    // scratch.
    auto staging = [&](int64_t w) {
      return reinterpret_cast<float*>(base) + w * kPoints * staging_point_;
    };
    if (pass_ == Pass::backward_filter) {
      const int64_t kg = l_.dst_channels, block = l_.filter_rows;
      for (int64_t g = 0; g < p_.groups; ++g) {
        if (block < kg) {
          // One chunk (the layout allows no blocks otherwise), shared: the workers transform
          // contiguous parts of its tiles, then take even shares of dU's rows in blocks, each
          // summed over all tiles into the worker's block buffer and written to dw while in
          // cache (a whole dU of 36 MiB at 512 channels went to memory and back). A tile's
          // transform and a block's sums do not depend on who runs them: the result is the
          // same for any thread count.
          const int64_t cs = l_.src_channels;
          float* v = buffers(0);
          float* prod = v + l_.input_floats;
          run_shared_chunk(
              base,
              [&](int64_t w, int64_t first, int64_t count) {
                transform_input_transposed(g, t.x, first, count, v + first * cs, staging(w));
                transform_gradient(g, t.y, first, count, prod + first);
              },
              [&](float* own, int64_t r0, int64_t rows) {
                accumulate_filter(own, v, prod, l_.tiles, r0, rows, false);
                write_filter(g, own, r0, rows, t.w, 1);
              });
          continue;
        }
        // Contiguous runs of chunks per worker, summed in worker order: the result depends
        // on the worker count, never on the schedule.
        run_workers([&](int64_t w) {
          float* v = buffers(w);
          float* prod = v + l_.input_floats;
          float* du = w == 0 ? u : partial(w);
          const int64_t first = chunks * w / l_.workers, last = chunks * (w + 1) / l_.workers;
          for (int64_t ci = first; ci < last; ++ci) {
            const int64_t t0 = ci * l_.chunk, count = std::min(l_.chunk, l_.tiles - t0);
            transform_input_transposed(g, t.x, t0, count, v, staging(w));
            transform_gradient(g, t.y, t0, count, prod);
            accumulate_filter(du, v, prod, count, 0, kg, ci != first);
          }
        });
        if (l_.workers > 1) {
          constexpr int64_t kBlock = 4096;
          parallel_for((l_.filter_floats + kBlock - 1) / kBlock, threads_, [&](int64_t b) {
            const int64_t end = std::min(l_.filter_floats, (b + 1) * kBlock);
            for (int64_t w = 1; w < l_.workers; ++w) {
              const float* part = partial(w);
              for (int64_t e = b * kBlock; e < end; ++e) u[e] += part[e];
            }
          });
        }
        write_filter(g, u, 0, kg, t.w, threads_);
      }
      return;
    }
    const float* src = pass_ == Pass::backward_data ? t.y : t.x;
    float* dst = pass_ == Pass::forward ? t.y : t.x;
    const int64_t cd = l_.dst_channels, block = l_.filter_rows;
    const bool blocked = block < cd;
    for (int64_t g = 0; g < p_.groups; ++g) {
      if (blocked && l_.input_buffers == 1 && l_.workers > 1) {
        // One chunk, shared: the workers transform contiguous parts of its tiles, then take
        // even shares of U's rows in blocks, each transformed, multiplied over all tiles and
        // its rows of the output written while in cache. Every block of U is transformed
        // once, where a chunk per worker would have each transform all of U. A tile's
        // transforms and a row's products do not depend on who runs them or on its block:
        // the result is the one-thread plan's.
        float* v = buffers(0);
        float* prod = v + l_.input_floats;
        run_shared_chunk(
            base,
            [&](int64_t, int64_t first, int64_t count) {
              transform_input(g, src, first, count, v + first);
            },
            [&](float* own, int64_t r0, int64_t rows) {
              transform_filter(g, t.w, own, r0, rows, 1);
              multiply(own, v, prod, l_.tiles, r0, rows);
              transform_output(g, dst, 0, l_.tiles, prod, r0, rows);
            });
        continue;
      }
      if (!blocked) transform_filter(g, t.w, u, 0, cd, threads_);
      // Chunks taken in turn by whichever worker is free: a chunk's tiles and operations do
      // not depend on who runs it, so the result is the same for any thread count and order.
      std::atomic<int64_t> next_chunk{0};
      run_workers([&](int64_t w) {
        float* v = buffers(w);
        float* prod = v + l_.input_floats;
        float* own_block = reinterpret_cast<float*>(base + winograd_filter_offset(l_, w));
        for (int64_t ci = next_chunk++; ci < chunks; ci = next_chunk++) {
          const int64_t t0 = ci * l_.chunk, count = std::min(l_.chunk, l_.tiles - t0);
          transform_input(g, src, t0, count, v);
          if (!blocked) {
            multiply(u, v, prod, count, 0, cd);
          } else {
            // U a block of rows at a time, transformed into cache right before its products
            // read it: a whole U larger than the cache would be written to memory and read
            // back for every chunk.
            for (int64_t r0 = 0; r0 < cd; r0 += block) {
              const int64_t rows = std::min(block, cd - r0);
              transform_filter(g, t.w, own_block, r0, rows, 1);
              multiply(own_block, v, prod, count, r0, rows);
            }
          }
          transform_output(g, dst, t0, count, prod, 0, cd);
        }
      });
    }
  }

 private:
  // body(w) for each worker w < l_.workers, one thread each: one fork and join per group
  // instead of three per chunk (on a loaded machine the barriers cost more than the work).
  template <class Body>
  void run_workers(Body body) const {
    // As many iterations as threads: one each. One worker runs no region (a team of another
    // size than the transforms' would make the OpenMP runtime allocate a new one inside run()).
    parallel_for(l_.workers, static_cast<int>(l_.workers), body);
  }

  // The one chunk of filter blocks, shared: worker w transforms the contiguous part [first,
  // first + count) of its tiles, transform(w, first, count); then it takes an even share of
  // the destination rows, in whole register tiles of the GEMM, as equal blocks of at most
  // filter_rows rows, block(the worker's block buffer, r0, rows). Blocks of filter_rows taken
  // in turn left one worker a whole block more than the other wherever the blocks were not a
  // multiple of the workers (256 rows: 84, 84, 84 and 4). A row's products and transforms do
  // not depend on the block it is in, so the result is the same for any split.
  template <class Transform, class Block>
  void run_shared_chunk(char* base, Transform transform, Block block) const {
    run_workers([&](int64_t w) {
      const int64_t first = l_.tiles * w / l_.workers;
      const int64_t count = l_.tiles * (w + 1) / l_.workers - first;
      if (count > 0) transform(w, first, count);
    });
    // Shares and blocks in whole register tiles of the GEMM where the blocks are.
    const int64_t rows = l_.dst_channels, step = l_.filter_rows;
    const int64_t unit =
        step % cpu_gemm::kUnpackedSgemmRows == 0 ? cpu_gemm::kUnpackedSgemmRows : 1;
    const int64_t units = (rows + unit - 1) / unit, step_units = step / unit;
    run_workers([&](int64_t w) {
      float* own = reinterpret_cast<float*>(base + winograd_filter_offset(l_, w));
      const int64_t first = units * w / l_.workers, share = units * (w + 1) / l_.workers - first;
      const int64_t blocks = (share + step_units - 1) / step_units;
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t r0 = (first + share * b / blocks) * unit;
        const int64_t r1 = std::min(rows, (first + share * (b + 1) / blocks) * unit);
        block(own, r0, r1 - r0);
      }
    });
  }

  int64_t src_total() const { return l_.src_total; }
  int64_t dst_total() const { return l_.dst_total; }
  void locate(int64_t tile, int64_t& n, int64_t& th, int64_t& tw) const {
    winograd_locate(l_, tile, &n, &th, &tw);
  }

  // Rows [r0, r0 + rows) of U (destination channels) into u: U[xi][k][c] = G w[k,c] G^T
  // (forward), U[xi][c][k] = G rot180(w[k,c]) G^T (backward-data), in runs of consecutive
  // entries of U, one per SIMD lane (contiguous stores), on `threads` threads.
  void transform_filter(int64_t g, const float* w, float* u, int64_t r0, int64_t rows,
                        int threads) const {
    const int64_t kg = p_.k_per_group(), cg = p_.c_per_group();
    const float* wg = w + g * kg * cg * 9;
    if (pass_ == Pass::forward) {  // entries k * Cg + c: consecutive filters
      const int64_t entries = rows * cg;
      const float* first_tap = wg + r0 * cg * 9;
      parallel_for((entries + kMaxRunTiles - 1) / kMaxRunTiles, threads, [&](int64_t job) {
        const int64_t first = job * kMaxRunTiles;
        const int64_t count = std::min(kMaxRunTiles, entries - first);
        kernels_.filter(M, first_tap + first * 9, 9, false, count, l_.filter_point, u + first);
      });
      return;
    }
    // Backward-data: entries c * Kg + k, consecutive k of one c Cg filters apart.
    const int64_t runs = (kg + kMaxRunTiles - 1) / kMaxRunTiles;
    parallel_for(rows * runs, threads, [&](int64_t job) {
      const int64_t c = r0 + job / runs, k0 = job % runs * kMaxRunTiles;
      const int64_t count = std::min(kMaxRunTiles, kg - k0);
      kernels_.filter(M, wg + (k0 * cg + c) * 9, cg * 9, true, count, l_.filter_point,
                      u + (c - r0) * kg + k0);
    });
  }

  // Runs of kMaxRunTiles consecutive tiles of [t0, t0 + count) (fewer for the last), across
  // tile rows and images, so that a small image still fills whole vectors:
  // body(run, offset of its first tile in the chunk). A segment's plane is its image's offset,
  // n * image_floats; its origin is the tile's, less (shift_h, shift_w).
  template <class Body>
  void for_each_run(int64_t t0, int64_t count, int64_t plane_h, int64_t plane_w,
                    int64_t image_floats, int64_t shift_h, int64_t shift_w, int64_t point_stride,
                    bool stream_points, Body body) const {
    TileRun run;
    run.plane_h = plane_h;
    run.plane_w = plane_w;
    run.point_stride = point_stride;
    run.stream_points = stream_points;
    int64_t at = 0;
    for (int64_t t = t0; t < t0 + count;) {
      int64_t n, th, tw;
      locate(t, n, th, tw);
      const int64_t tiles = std::min({l_.tiles_w - tw, t0 + count - t, kMaxRunTiles - run.tiles});
      run.add(n * image_floats, th * M - shift_h, tw * M - shift_w, tiles);
      t += tiles;
      if (run.tiles == kMaxRunTiles || t == t0 + count) {
        body(run, at);
        at += run.tiles;
        run.tiles = 0;
        run.segments = 0;
      }
    }
  }

  // V[xi][c][tile - t0] = B^T d B for the source patches of tiles [t0, t0 + count).
  void transform_input(int64_t g, const float* src, int64_t t0, int64_t count, float* v) const {
    const int64_t cs = l_.src_channels, plane = l_.src_h * l_.src_w;
    for_each_run(t0, count, l_.src_h, l_.src_w, src_total() * plane, l_.offset_h, l_.offset_w,
                 l_.input_point, false, [&](const TileRun& run, int64_t at) {
                   for (int64_t c = 0; c < cs; ++c) {
                     kernels_.input(M, src + (g * cs + c) * plane, run, v + c * l_.chunk + at);
                   }
                 });
  }

  // M[xi] rows [r0, r0 + rows) = U[xi] (rows x Cs, the block's) * V[xi] (Cs x count), on the
  // worker's one thread. U[xi] is read once per chunk, from memory where U is whole: the GEMM
  // fetches it ahead (stream_a).
  void multiply(const float* u, const float* v, float* prod, int64_t count, int64_t r0,
                int64_t rows) const {
    const int64_t cs = l_.src_channels;
    for (int64_t xi = 0; xi < kPoints; ++xi) {
      cpu_gemm::unpacked_sgemm(isa_, false, rows, count, cs, u + xi * l_.filter_point, cs,
                               v + xi * l_.input_point, l_.chunk, 0.0f,
                               prod + xi * l_.product_point + r0 * l_.chunk, l_.chunk, nullptr,
                               nullptr, nullptr, true);
    }
  }

  // dst tile = A^T M A for the destination channels [r0, r0 + rows), the part inside the
  // image written.
  void transform_output(int64_t g, float* dst, int64_t t0, int64_t count, const float* prod,
                        int64_t r0, int64_t rows) const {
    const int64_t cd = l_.dst_channels, plane = l_.dst_h * l_.dst_w;
    for_each_run(t0, count, l_.dst_h, l_.dst_w, dst_total() * plane, 0, 0, l_.product_point, false,
                 [&](const TileRun& run, int64_t at) {
                   for (int64_t k = r0; k < r0 + rows; ++k) {
                     kernels_.output(M, prod + k * l_.chunk + at, run, dst + (g * cd + k) * plane);
                   }
                 });
  }

  // P[xi][k][tile - t0] = A dY A^T of the m x m dy tiles (zero past the edge).
  void transform_gradient(int64_t g, const float* dy, int64_t t0, int64_t count,
                          float* prod) const {
    const int64_t kg = l_.dst_channels, plane = l_.dst_h * l_.dst_w;
    for_each_run(t0, count, l_.dst_h, l_.dst_w, p_.k * plane, 0, 0, l_.product_point,
                 stream_gradient_, [&](const TileRun& run, int64_t at) {
                   for (int64_t k = 0; k < kg; ++k) {
                     kernels_.gradient(M, dy + (g * kg + k) * plane, run, prod + k * l_.chunk + at);
                   }
                 });
  }

  // Backward-filter's Vt[xi][tile - t0][c] = (B^T d B)[xi] (V transposed, count x Cs, in the
  // input buffer at its point stride): the products below sum over tiles, V's contiguous
  // dimension, and the unpacked GEMM wants its B operand's columns (here Cs) contiguous. The
  // transforms of kStagingChannels channels of one run go to the staging buffer, in cache,
  // and are transposed from there.
  void transform_input_transposed(int64_t g, const float* src, int64_t t0, int64_t count, float* vt,
                                  float* stage) const {
    const int64_t cs = l_.src_channels, plane = l_.src_h * l_.src_w;
    for_each_run(
        t0, count, l_.src_h, l_.src_w, src_total() * plane, l_.offset_h, l_.offset_w,
        staging_point_, false, [&](const TileRun& run, int64_t at) {
          for (int64_t c0 = 0; c0 < cs; c0 += kStagingChannels) {
            const int64_t channels = std::min(kStagingChannels, cs - c0);
            for (int64_t c = 0; c < channels; ++c) {
              kernels_.input(M, src + (g * cs + c0 + c) * plane, run, stage + c * kMaxRunTiles);
            }
            for (int64_t xi = 0; xi < kPoints; ++xi) {
              cpu_gemm::transpose(isa_, channels, run.tiles, stage + xi * staging_point_,
                                  kMaxRunTiles, vt + xi * l_.input_point + at * cs + c0, cs);
            }
          }
        });
  }

  // dU[xi] rows [r0, r0 + rows) (+)= P[xi] (rows x count) * Vt[xi] (count x Cg), into du's
  // rows from 0, on the worker's thread.
  void accumulate_filter(float* du, const float* vt, const float* prod, int64_t count, int64_t r0,
                         int64_t rows, bool accumulate) const {
    const int64_t cg = l_.src_channels;
    for (int64_t xi = 0; xi < kPoints; ++xi) {
      cpu_gemm::unpacked_sgemm(
          isa_, false, rows, cg, count, prod + xi * l_.product_point + r0 * l_.chunk, l_.chunk,
          vt + xi * l_.input_point, cg, accumulate ? 1.0f : 0.0f, du + xi * l_.filter_point, cg);
    }
  }

  // dw[k, c] = G^T dU[.][k][c] G for k in [r0, r0 + rows) (du holding those rows from 0), in
  // runs of consecutive (k, c), on `threads` threads.
  void write_filter(int64_t g, const float* du, int64_t r0, int64_t rows, float* dw,
                    int threads) const {
    const int64_t cg = p_.c_per_group(), entries = rows * cg;
    float* dw_rows = dw + (g * p_.k_per_group() + r0) * cg * 9;
    parallel_for((entries + kMaxRunTiles - 1) / kMaxRunTiles, threads, [&](int64_t job) {
      const int64_t first = job * kMaxRunTiles, count = std::min(kMaxRunTiles, entries - first);
      kernels_.filter_adjoint(M, du + first, l_.filter_point, count, dw_rows + first * 9);
    });
  }

  ConvProblem p_;
  Pass pass_;
  WinogradLayout l_;
  int64_t staging_point_;  ///< backward-filter: floats between the staging buffer's points
  bool stream_gradient_;   ///< backward-filter: P's transforms bypass the cache
  int threads_;
  CpuIsa isa_;
  TileKernels kernels_;
};

// The shared variant and tiles knobs, the CPU's layout and store choices, then the instruction
// set of the tile transforms.
std::vector<KnobSpec> cpu_winograd_knobs() {
  std::vector<KnobSpec> knobs = winograd_knobs(
      "a multiple of 64 within 2 MiB of transforms, at least 64, at most tiles / "
      "threads; where U is in blocks, forward's and backward-data's tiles up to 144 (192 on "
      "more than one thread) one chunk, backward-filter's up to 192 on more than one thread "
      "(not on AMD CPUs); else backward-filter, where dU is past 8 MiB, even chunks (a multiple "
      "of the threads) of up to twice dU's bytes (AMD CPUs) or half (others)");
  knobs.push_back(integer_knob(
      "filter_rows", "auto", 1, INT_MAX, true, "",
      "forward and backward-data (backward-filter when its tiles are one chunk): destination "
      "channels per block of the filter transform, "
      "transformed with each chunk (at least the destination channels: U whole, once per "
      "group); auto: whole when U is at most 4 MiB or a worker runs several chunks (except "
      "tiles up to 144, or 192 on more than one thread, then one chunk; backward-filter: 192 "
      "on more than one thread, not on AMD CPUs), else blocks of at most 3 MiB"));
  knobs.push_back(choice_knob(
      "gradient_stores", "auto", {"auto", "streamed", "cached"}, "",
      "backward-filter: how the gradient transform writes P, the chunk's products: streamed "
      "(non-temporal stores, past the cache) or cached; auto: streamed where P is larger than "
      "4 MiB"));
  knobs.push_back(
      choice_knob("isa", "auto", cpu_isa_choices(), "CONVLAB_WINOGRAD_ISA",
                  "instruction set of the tile transforms and the GEMM: auto (the widest this CPU "
                  "runs), generic (SSE2), avx2, avx512"));
  return knobs;
}

class CpuWinograd final : public Algorithm {
 public:
  const AlgorithmInfo& info() const override {
    static const AlgorithmInfo kInfo{
        kName,
        Device::cpu,
        Family::winograd,
        "winograd+unpacked_sgemm",
        "Winograd F(2x2,3x3)/F(4x4,3x3): tile transforms + one GEMM per transform point, "
        "stride-1 dense 3x3",
        /*deterministic=*/true,
        MathMode::fp32,
        cpu_winograd_knobs()};
    return kInfo;
  }

  Support supports(const ConvProblem& p, Pass) const override {
    p.validate();
    const Support shape = winograd_shape_support(kName, p);
    if (!shape) return shape;
    return Support::yes();
  }

  ErrorBound error_bound(const ConvProblem& p, Pass pass) const override {
    // The knobs are not known here: the larger of the two variants' bounds.
    return winograd_worst_error_bound(p, pass, num_threads());
  }

  DeviceContext& context() const override { return host_context(); }

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem& p, Pass pass,
                                  const KnobValues& knobs) const override {
    const Support support = supports(p, pass);
    if (!support) throw Error(ErrorCode::unsupported, support.reason);
    const CpuIsa isa = cpu_isa(knob_text(knobs, "isa"), "cpu.winograd.isa");
    const WinogradLayout layout = cpu_winograd_layout(p, pass, knobs);
    const bool stream_gradient = cpu_winograd_streams_gradient(pass, layout, knobs);
    if (layout.m == 2) {
      return std::make_unique<WinogradPlan<2>>(p, pass, layout, stream_gradient, num_threads(),
                                               isa);
    }
    return std::make_unique<WinogradPlan<4>>(p, pass, layout, stream_gradient, num_threads(), isa);
  }
};

}  // namespace

WinogradOptions cpu_winograd_options(const KnobValues& knobs) {
  WinogradOptions options;
  options.chunk_bytes = kWinogradCpuChunkBytes;
  options.workers = num_threads();
  options.point_skew_floats = kWinogradCpuPointSkew;
  options.min_chunk = kWinogradCpuMinChunk;
  // Whole 64-column panels of the unpacked GEMM and whole runs of the tile transforms: an
  // auto chunk of 113 tiles (the 56x56 layer's 2 MiB) ran 10-20 % slower than 64 or 128.
  options.chunk_multiple = kMaxRunTiles;
  options.chunk_per_worker = true;
  options.gradient_chunk_filter_percent = cpu_winograd_gradient_chunk_percent();
  options.gradient_chunk_min_filter_bytes = kWinogradCpuGradientChunkMinFilterBytes;
  return winograd_options(knobs, options);
}

int64_t cpu_winograd_gradient_chunk_percent() {
  return cpu_vendor() == CpuVendor::amd ? kWinogradCpuGradientChunkPercentAmd
                                        : kWinogradCpuGradientChunkPercentOther;
}

int64_t cpu_winograd_staging_point(Pass pass) {
  return pass == Pass::backward_filter ? kStagingChannels * kMaxRunTiles + kWinogradCpuPointSkew
                                       : 0;
}

bool cpu_winograd_streams_gradient(Pass pass, const WinogradLayout& layout,
                                   const KnobValues& knobs) {
  if (pass != Pass::backward_filter) return false;
  const std::string& stores = knob_text(knobs, "gradient_stores");
  if (stores != "auto") return stores == "streamed";
  return 4 * layout.product_floats > kWinogradCpuStreamedGradientBytes;
}

int64_t cpu_winograd_block_chunk_tiles(Pass pass, int64_t workers) {
  if (pass == Pass::backward_filter) {
    return workers > 1 && cpu_vendor() != CpuVendor::amd ? kWinogradCpuSharedGradientChunkTiles : 0;
  }
  return workers > 1 ? kWinogradCpuSharedBlockChunkTiles : kWinogradCpuBlockChunkTiles;
}

int64_t cpu_winograd_filter_rows(const ConvProblem& p, Pass pass, const KnobValues& knobs, int m,
                                 const WinogradLayout& whole) {
  if (const std::optional<int64_t> rows = knob_integer(knobs, "filter_rows")) return *rows;
  const bool data = pass == Pass::backward_data;
  const int64_t points = int64_t{m + 2} * (m + 2);
  const int64_t src = data ? p.k_per_group() : p.c_per_group();
  const int64_t dst = data ? p.c_per_group() : p.k_per_group();
  const int64_t row_bytes = checked_mul(4 * points, src, "cpu.winograd filter transform");
  if (checked_mul(row_bytes, dst, "cpu.winograd filter transform") <= kWinogradCpuWholeFilterBytes)
    return 0;
  // A worker with several chunks would transform every block once per chunk, and read the
  // chunk's V (2 MiB, past L2) once per block: the 14x14 layer at mb 16 (four chunks) ran
  // 1.3-1.5x slower in 12-row blocks than with U whole, transformed once and read from memory
  // once per chunk, on the Intel Xeon VM (docs/strategy-winograd.md).
  if (pass != Pass::backward_filter && whole.chunks > whole.workers &&
      whole.tiles > cpu_winograd_block_chunk_tiles(pass, whole.workers))
    return 0;
  // Whole register tiles of the GEMM where the block holds at least one.
  const int64_t rows = kWinogradCpuFilterBlockBytes / row_bytes,
                tile = cpu_gemm::kUnpackedSgemmRows;
  return rows >= tile ? rows / tile * tile : std::max<int64_t>(1, rows);
}

WinogradLayout cpu_winograd_layout(const ConvProblem& p, Pass pass, const KnobValues& knobs) {
  WinogradOptions options = cpu_winograd_options(knobs);
  options.block_chunk_tiles = cpu_winograd_block_chunk_tiles(pass, options.workers);
  // The rule for blocks looks at the chunks of U whole (forward and backward-data: cut one per
  // worker) or not at all (backward-filter); with blocks, tiles that fit one chunk then stay
  // one, shared by the workers.
  options.filter_rows = cpu_winograd_filter_rows(p, pass, knobs, options.m,
                                                 winograd_layout(p, pass, options));
  // The chunk and the workers do not depend on the library scratch, so the first layout
  // sizes it and the second places it.
  const WinogradLayout sizing = winograd_layout(p, pass, options);
  options.library_bytes =
      checked_mul(4 * sizing.workers * sizing.alpha * sizing.alpha,
                  cpu_winograd_staging_point(pass), "cpu.winograd input staging");
  return winograd_layout(p, pass, options);
}

ErrorBound cpu_winograd_error_bound(const ConvProblem& p, Pass pass, int m) {
  return winograd_error_bound(p, pass, m, num_threads());
}

}  // namespace convlab::winograd

namespace convlab {

void register_cpu_winograd(Registry& registry) {
  registry.add(std::make_unique<winograd::CpuWinograd>());
}

}  // namespace convlab
