// cpu.im2col: convolution as im2col + GEMM on the CPU, all three passes.
//
// Derivation. One group g of one image n; Cg = C/g, Kg = K/g, P = OH*OW, L = Cg*R*S.
// Cross-correlation y[k,oh,ow] = sum_{c,i,j} w[k,c,i,j] * x[c, oh*sh - ph + i*dh,
// ow*sw - pw + j*dw] (x read as zero outside the image). Lay the taps out as the column
// buffer of strategy/im2col_index.hpp, col[(c*R + i)*S + j, oh*OW + ow] = that x element.
// A KCRS filter group is already the row-major matrix W[Kg, L] with the same row index, so
//
//   forward          Y[Kg, P]  = W[Kg, L] * col[L, P]                  (GEMM, beta = 0)
//   backward-data    col[L, P] = W^T[L, Kg] * dY[Kg, P],  dx = col2im(col)
//   backward-filter  dW[Kg, L] += dY[Kg, P] * col^T[P, L]   summed over the images
//
// Backward-data is the adjoint of the forward map x -> col -> W*col: the adjoint of the GEMM
// is W^T, the adjoint of im2col (a copy of x into many places) is the sum of those places
// back into x, col2im. We compute it as a gather (each dx element sums, in tap order, the
// col entries that copied it; see im2col_index.hpp), which is deterministic and needs no
// atomics. Backward-filter is the adjoint in w: dW = sum_n dY_n col_n^T.
//
// Images per GEMM (b). Putting b images side by side, col[L, b*P] with column m*P + p,
// turns b GEMMs of width P into one of width b*P (small late layers have P = 7*7 = 49, a
// shape BLAS runs far below peak). NCHW stores image m of the group's outputs at a stride of
// K*P, not P, so with b > 1 the GEMM's [Kg, b*P] operand (Y forward, dY backward) is a staged
// copy ("stage"). The backward-filter sum over images simply becomes the GEMM's inner
// dimension b*P.
//
// Tiles. With the knob tile = T > 0 the images go one at a time (b = 1) and each image's P
// output pixels are cut into blocks of T (the last shorter): per block, col[L, T] is built
// and used at once, so the buffer (L*T floats) can stay in cache between im2col and its
// GEMM. Forward writes Y[:, block] and backward-filter reads dY[:, block] in place (row
// stride P); backward-data adds each block's col2im into dx, zeroed first, so a dx element
// sums its taps block by block (deterministic; the whole-image gather's order when T >= P).
//
// Tap classes (taps=in_image; strategy/im2col_tap_classes.hpp). The taps through which an
// output pixel reads inside the image are a rectangle that depends on its row and column
// only, so the pixels fall into a few rectangles ("classes": for 3x3 pad 1 the top row, the
// bottom row, the left and right edges and the interior) each with its own tap rectangle.
// Per class k, with col_k holding only its taps' rows (c, i, j) and its pixels:
//   forward          Y[Kg, pixels_k]  = W[Kg, taps_k] * col_k,  scattered into y
//   backward-data    col_k = W[Kg, taps_k]^T * dY[Kg, pixels_k], added into dx (zeroed first)
//   backward-filter  dW[Kg, taps_k] += dY[Kg, pixels_k] * col_k^T, added into dW's columns
// W[Kg, taps_k] is read through an index of its columns (the unpacked GEMM's a_index), never
// copied; backward-filter's product goes through a panel and is added into those columns.
// Each class runs over a worker's images of one group in chunks of its own size, so that
// narrow classes still make wide GEMMs. The products of taps that read padding are
// gone: 16 % of them on a 7x7 image. With stride 1, backward-data instead runs the forward
// classes of the transposed convolution (dy by the filter flipped, strategy/
// im2col_tap_classes.hpp): the GEMM reads the filter flipped in place through the index
// (flipped_tap_offsets), and each dx pixel is one dot product over its in-image taps, with no
// col2im. There the corners' padding zeros meet the filter, so its classes are merged only
// where the problem pads each side as much as the transposed convolution, as with every tap
// (tap_class_cut), and exact (no padding tap at the corners) elsewhere. The forward form
// builds col_k a block of whole input channels (kClassDepthRows rows) at a time and
// multiplies each block while it is in cache, adding into the stage (beta 1 after the first
// block), so its buffer holds one block.
//
// Transposed backward-data (bwd_data=transposed, or auto where it applies). With stride 1,
// dx is the forward convolution of dy by the flipped, transposed filter (transposed_geometry:
// dy of K/g channels its input, dx its output): the forward code runs on that geometry, tiled
// alike, its GEMM writing dx, with no col2im. With every tap its column buffer reads dy's
// padding as zeros that meet the filter, so it runs only where the problem pads each side as
// much (transposed_all_taps_refusal); auto also wants K/g <= C/g, so that its buffer is no
// larger than col2im's, or the implicit columns below to read that buffer in place. Under tap
// classes it runs the classes above.
//
// Implicit columns (columns=implicit, or auto where it pays; strategy/im2col_padded_grid.hpp).
// With stride 1, each row of the column buffer is a run of the image padded once: the forward
// convolution (forward, or the transposed backward-data) pads one image's group into `col`,
// and its GEMM reads B's row l at grid + offset[l] (the unpacked SGEMM's b_index), block by
// block of grid columns into the stage, whose output pixels are copied out. Backward-filter
// (any stride) pads a chunk's images into `col` and reads the column buffer's column l, in
// the GEMM's depth, at offset[l] (the unpacked SGEMM's a_index), one GEMM per tap whose rows
// are the input channels, a padded plane apart, into dW^T; per depth block it transposes dY's
// pixels into the stage itself. No extra columns: each NaN or Inf of x meets the products
// of the column buffer, no others. The values and their order are the column buffer's: the
// same bits.
//
// Masked columns (columns=masked, or auto where it pays; strategy/im2col_masked_columns.hpp).
// With stride 1 and OW = W, each row of the column buffer is a run of the unpadded input with
// the taps in the padding masked off: the forward convolution (forward, or the transposed
// backward-data) runs one GEMM per image reading B's row l at in + offset[l], its lanes by
// the tap's bits (the unpacked SGEMM's b_index and b_lanes), into the output in place. The
// depth runs in blocks of channels, tap by tap, so the bits change once per block; the filter
// (flipped, transposed) is copied into that order once per run (`ordered`). The sums are the
// column buffer's products in that order: exact where they are, not the buffer's bits.
//
// 1x1 shortcut. With R = S = 1, stride 1, pad 0, col = x_n itself ([Cg, H*W], rows at
// stride H*W), so the GEMMs read x (forward, backward-filter) or write dx (backward-data) in
// place and there is no column buffer; b is 1 there (batching would need the copy it avoids).
//
// Backward-filter transposed (Im2colLayout::dw_transposed): dW^T[L, Kg] += col * dY^T, the
// same products, where the unpacked GEMM's transposed B is then dY's blocks, smaller than the
// column buffer's; each worker's dW^T is transposed into its dW at the end.
//
// GEMM mapping. All matrices are row-major with the leading dimensions above; cblas_sgemm
// with CblasRowMajor (OpenBLAS, the default) and dnnl_sgemm (opt-in) take them as they are,
// Eigen as Map<RowMajor, OuterStride>. W^T and col^T are the transpose flags, never copies.
// Backward-filter zeroes its dW accumulator once and runs every GEMM with beta = 1.
//
// Threads (T = convlab::num_threads() at plan time). The (group, image) pairs, Q = g*N, are
// split into `workers` contiguous slices; in "images" mode each of T OpenMP threads runs a
// slice with a single-threaded GEMM and its own buffers, in "gemm" mode one slice covers
// everything and the GEMM library gets T threads, in "channels" mode (tap classes) each of T
// workers runs every image for its share of each class GEMM's output rows, copying every
// column buffer itself (each output element is still one dot product in the one-thread order:
// the bits do not depend on T), in "in_channels" mode (the tap classes of forward and the
// transposed backward-data) each of T workers runs every image for its share of each class
// GEMM's input channels, all output rows, into an output of its own. Backward-filter in
// images mode gives each extra worker a private dW ("partial"), in_channels mode a private y
// or dx, added into the output in worker order afterwards (the threads split the elements of
// that sum), so the result depends on T but not on scheduling: deterministic for a fixed
// thread count.
//
// Workspace (floats; pad16 rounds up to a multiple of 16 so each buffer is 64-byte aligned):
//   col     = pointwise ? 0 : pad16(L * (tiled ? min(T, P) : b*P))
//   stage   = b > 1 ? pad16(Kg * b*P) : 0
//   partial = bwd_filter in images mode ? pad16(K * L)
//             : in_channels mode ? pad16(N*K*OH*OW) (forward), pad16(N*C*H*W) (backward-data)
//             : 0
//   gemm    = the GEMM's scratch (gemm.hpp)
//   tap classes: col = pad16(max_k Cb_k*taps_k * W_k), W_k = b_k*P_k, rounded up to a
//                multiple of 16 (class_row_pitch) in forward and the transposed
//                backward-data, where it is the GEMM's B; Cb_k = Cg for the adjoint
//                backward-data, else a block of min(Cg, max(1, 256 / taps_k)) channels,
//                stage = pad16(Kg * max_k b_k*P_k),
//                index = pad16(2 * Cg * max_k taps_k) (the int64 filter columns of a class;
//                none for backward-filter, which adds into them by runs);
//                transposed backward-data: Kg and Cg swap places (the filter read in place)
//                backward-filter: a block for all classes, stage = pad16(Kg * sum_k P_k *
//                the worker's images) (dY staged by class), panel = pad16(Kg * max block rows)
//   transposed backward-data, every tap: the forward formulas on the transposed geometry
//                (Kg*R*S column rows, Cg GEMM rows, P = H*W), flipped = pad16(K*C/g*R*S)
//   implicit columns: col = pad16(Ci * plane) (the padded image, Ci the convolution's input
//                channels, plane = Hp*P + shared: rows of pitch P sharing `shared` padding
//                columns), stage = pad16(M * T) (M the GEMM's rows, T the tile in grid
//                columns), index = pad16(2 * Ci*R*S) (the rows' offsets); b = 1;
//                backward-filter: col = pad16(b * Cg * plane) (Hp = (OH-1)*sh + dh*(R-1) + 1,
//                Wp alike), stage = pad16(Kg * min(256, width)) (dY^T of one depth block),
//                index = pad16(2 * min(256, width)) (that block's pixels' offsets), dw_t as
//                below, gemm = 0; in channels mode Cg is the largest worker's share of the
//                input channels (largest_channel_part) in col and dw_t, and no partial
//   masked columns: col = 0, stage = 0, index = pad16(4 * Ci*R*S) (the depth steps' offsets
//                and lane rows) + pad16(ceil(R*S * ceil(P'/16) / 2)) (the lane bits, P' the
//                GEMM's pixels), ordered = pad16(K*C/g*R*S), one for all workers; b = 1
//   dw_t    = backward-filter transposed (Im2colLayout::dw_transposed) ? pad16(K * L) : 0
//             (channels mode: pad16(K * R*S * the largest share of C/g))
//   bytes   = 4 * (workers * (col + stage + panel + gemm + index + dw_t)
//                  + (workers - 1) * partial + flipped + ordered)
// Worker v's buffers start at v*(col + stage + panel + gemm + index + dw_t) in that order; the
// partials follow all workers, the flipped filter the partials, the ordered filter that.
// run() allocates nothing itself; what the GEMM libraries and the OpenMP runtime allocate
// inside is measured in docs/strategy-im2col.md and docs/memory-honesty.md.

#include "cpu_im2col.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <utility>

#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cpu/gemm_kernels/transpose.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "im2col_loops.hpp"
#include "padded_grid_loops.hpp"
#include "strategy/im2col_index.hpp"
#include "strategy/im2col_masked_columns.hpp"
#include "strategy/im2col_tap_classes.hpp"
#include "tap_class_loops.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace convlab::im2col {
namespace {

constexpr const char* kName = "cpu.im2col";

// One contiguous run of b' <= b images of one group.
struct Chunk {
  int64_t group = 0, image = 0, count = 0;
};

// Which share of the class GEMMs a worker computes: part `index` of `count` of their output
// rows (channels mode) or of their input channels (in_channels mode), or all of them.
struct RowPart {
  int64_t index = 0, count = 1;
  // This part's [begin, end) of n rows, cut at multiples of `unit` (the GEMM's register tile
  // rows) where the split allows.
  RowRange share(int64_t n, int64_t unit = 1) const { return row_part(n, index, count, unit); }
};

// One worker's buffers for the tap classes; index holds the current class's filter columns.
struct ClassBuffers {
  float* col;
  float* stage;
  float* panel;  // backward-filter: one channel block's dW columns
  float* gemm;
  int64_t* index;
  const float* flipped;  // the transposed convolution's filter (transposed backward-data)
  float* dw = nullptr;   // backward-filter: the worker's dW (dw, or its partial)
};

class Im2colPlan final : public Plan {
 public:
  Im2colPlan(const ConvProblem& p, Pass pass, const Im2colOptions& options, Im2colLayout layout)
      : p_(p),
        pass_(pass),
        backend_(options.backend),
        layout_(layout),
        geometry_(make_im2col_geometry(p, 1)),
        conv_geometry_(layout_.transposed ? transposed_geometry(p) : geometry_) {
    if (layout_.tap_classes) classes_ = tap_classes(conv_geometry_, layout_.class_cut);
    info_.details.emplace_back("taps", std::string(layout_.tap_classes ? "in_image" : "all") +
                                           (layout_.transposed ? ", transposed" : ""));
    info_.details.emplace_back("columns", layout_.implicit    ? "implicit"
                                          : layout_.masked    ? "masked"
                                          : layout_.pointwise ? "x in place (1x1)"
                                                              : "buffer");
    if (pass == Pass::backward_data) {
      info_.details.emplace_back("bwd_data", layout_.transposed ? "transposed"
                                             : layout_.pointwise ? "1x1 GEMM into dx"
                                                                 : "col2im");
    }
    info_.kernel = std::string("gemm ") + to_string(layout_.backend);
    const std::string runtime = gemm_backend_runtime(layout_.backend);
    if (!runtime.empty()) {
      info_.kernel += ", " + runtime;
      info_.details.emplace_back("gemm_runtime", runtime);
    }
    if (layout_.backend == GemmBackend::unpacked) {
      info_.kernel += std::string(", ") + to_string(layout_.gemm_scratch.isa);
      info_.details.emplace_back("isa", to_string(layout_.gemm_scratch.isa));
    }
    info_.workspace_split = {
        {"columns", static_cast<std::size_t>(4 * layout_.workers * layout_.col)},
        {"stage", static_cast<std::size_t>(4 * layout_.workers * (layout_.stage + layout_.panel))},
        {"gemm_packing", static_cast<std::size_t>(4 * layout_.workers * layout_.gemm)},
        {"tap_index", static_cast<std::size_t>(4 * layout_.workers * layout_.index)},
        {"partials", static_cast<std::size_t>(4 * (layout_.workers - 1) * layout_.partial)},
        {"flipped_filter", static_cast<std::size_t>(4 * layout_.flipped)},
        {"ordered_filter", static_cast<std::size_t>(4 * layout_.ordered)}};
    info_.details.insert(info_.details.begin(),
                         {{"layout", layout_.describe()},
                          {"own_threads", std::to_string(layout_.workers)},
                          {"gemm_threads", std::to_string(layout_.gemm_threads)}});
    if (layout_.tile > 0) {
      info_.tile = std::to_string(layout_.tile) +
                   (layout_.implicit && !layout_.pixel_offsets ? " grid columns" : " pixels");
    }
  }

  std::size_t workspace_bytes() const override { return layout_.workspace_bytes; }

 protected:
  void execute(const Tensors& t, const Workspace& ws, Stream) override {
    check_run_arguments(kName, p_, pass_, t, ws, layout_.workspace_bytes);
    float* base = static_cast<float*>(ws.data);
    if (layout_.workers > 1) {
      set_gemm_threads(backend_, layout_.gemm_threads);
      // No exception may leave an OpenMP region: the first one is kept and rethrown after.
      std::exception_ptr failure;
      auto slice = [&](int64_t v) {
        try {
          run_slice(v, t, base);
        } catch (...) {
#ifdef _OPENMP
#pragma omp critical(convlab_im2col_failure)
#endif
          if (!failure) failure = std::current_exception();
        }
      };
      const bool reduce = layout_.partial > 0;
#ifdef _OPENMP
      const int workers = static_cast<int>(layout_.workers);
#pragma omp parallel num_threads(workers)
      {
        // After the barrier every thread adds its own range of elements: the serial sum of a
        // 9 MiB dW cost a tenth of a two-thread backward-filter pass on ResNet-50's 7x7 layer.
        // The partials are dW's (images mode) or the output's (in_channels mode).
        const int thread = omp_get_thread_num(), threads = omp_get_num_threads();
        if (layout_.flipped > 0 || layout_.ordered > 0) {
          copy_filter(t.w, base, thread, threads);
#pragma omp barrier
        }
        for (int64_t v = thread; v < layout_.workers; v += threads) slice(v);
#pragma omp barrier
        if (reduce && !failure) reduce_partials(t, base, thread, threads);
      }
#else
      copy_filter(t.w, base, 0, 1);
      for (int64_t v = 0; v < layout_.workers; ++v) slice(v);
      if (reduce && !failure) reduce_partials(t, base, 0, 1);
#endif
      if (failure) std::rethrow_exception(failure);
    } else {
      set_gemm_threads(backend_, layout_.gemm_threads);
      copy_filter(t.w, base, 0, 1);
      run_slice(0, t, base);
    }
  }

 private:
  // The instruction set of the plan's kernels: the unpacked GEMM's (the tap classes' row
  // copies take it too).
  CpuIsa isa() const { return layout_.gemm_scratch.isa; }

  // A worker's buffers, one after another: col, stage, panel, gemm, index, dw_t.
  int64_t worker_floats() const {
    return layout_.col + layout_.stage + layout_.panel + layout_.gemm + layout_.index +
           layout_.dw_t;
  }
  float* dw_t_of(int64_t v, float* base) const {
    return base + (v + 1) * worker_floats() - layout_.dw_t;
  }
  float* partial_of(int64_t v, float* base) const {
    return base + layout_.workers * worker_floats() + (v - 1) * layout_.partial;
  }
  float* flipped_of(float* base) const { return partial_of(layout_.workers, base); }
  float* ordered_of(float* base) const { return flipped_of(base) + layout_.flipped; }
  // Group g's rows of the flipped filter: C/g rows of K/g*R*S, as w holds K/g rows of C/g*R*S.
  const float* flipped_group(const float* flipped, int64_t group) const {
    return flipped + group * p_.c_per_group() * col_rows(conv_geometry_);
  }
  // Group g's rows of the masked form's filter: the GEMM's rows of its depth.
  const float* ordered_group(const float* ordered, int64_t group) const {
    return ordered + group * (layout_.transposed ? p_.c_per_group() : p_.k_per_group()) *
                         col_rows(conv_geometry_);
  }
  // Where the masked form's lane bits follow its offsets and lane rows in the index.
  uint16_t* masked_bits(int64_t* index) const {
    return reinterpret_cast<uint16_t*>(index + 2 * col_rows(conv_geometry_));
  }
  const uint16_t* masked_bits(const int64_t* index) const {
    return reinterpret_cast<const uint16_t*>(index + 2 * col_rows(conv_geometry_));
  }
  ClassBuffers class_buffers(int64_t v, float* base) const {
    float* col = base + v * worker_floats();
    float* stage = col + layout_.col;
    float* panel = stage + layout_.stage;
    float* gemm = panel + layout_.panel;
    // The index holds int64 values only; the workspace is raw storage, 64-byte aligned.
    auto* index = reinterpret_cast<int64_t*>(gemm + layout_.gemm);
    return {col, stage, panel, gemm, index, flipped_of(base)};
  }

  // The filter copies the plan's GEMMs read, for part `part` of `parts` ranges of their rows
  // (the threads write disjoint rows): the flipped filter (strategy/im2col_tap_classes.hpp,
  // flip_filter_rows) by w's (group, k) rows, or the masked form's, its columns reordered
  // (strategy/im2col_masked_columns.hpp, masked_filter_rows) by its own (group, GEMM row).
  void copy_filter(const float* w, float* base, int part, int parts) const {
    if (layout_.flipped > 0) {
      const int64_t rows = p_.groups * p_.k_per_group();
      flip_filter_rows(p_, w, rows * part / parts, rows * (part + 1) / parts, flipped_of(base));
    }
    if (layout_.ordered > 0) {
      const int64_t rows = p_.groups * (layout_.transposed ? p_.c_per_group() : p_.k_per_group());
      masked_filter_rows(p_, conv_geometry_, layout_.transposed, layout_.masked_block, w,
                         rows * part / parts, rows * (part + 1) / parts, ordered_of(base));
    }
  }

  // The pass's output: y, dx or dW, with its element count.
  std::pair<float*, int64_t> output_of(const Tensors& t) const {
    switch (pass_) {
      case Pass::forward:
        return {t.y, p_.y_elems()};
      case Pass::backward_data:
        return {t.x, p_.x_elems()};
      case Pass::backward_filter:
        break;
    }
    return {t.w, p_.w_elems()};
  }

  // The worker-order sum out = out_0 + out_1 + ... of the output (worker 0 accumulated into
  // it itself), over part `part` of `parts` contiguous element ranges: each element is summed
  // in the same order however the ranges are split, so the bits do not depend on the split.
  void reduce_partials(const Tensors& t, float* base, int part, int parts) const {
    const auto [out, elems] = output_of(t);
    const int64_t begin = elems * part / parts, end = elems * (part + 1) / parts;
    for (int64_t v = 1; v < layout_.workers; ++v) {
      const float* summand = partial_of(v, base);
      for (int64_t e = begin; e < end; ++e) out[e] += summand[e];
    }
  }

  // Worker v's share of the (group, image) pairs, q = group*N + image, in chunks of <= b
  // images of one group, each through the pass's GEMMs.
  void run_slice(int64_t v, const Tensors& t, float* base) const {
    const int64_t pairs = p_.groups * p_.n;
    if (layout_.mode == ParallelMode::in_channels) {
      // Each worker sums its channel blocks into all of its own output: y or dx for the first,
      // a partial of that size for the others (reduce_partials).
      Tensors mine = t;
      if (v > 0) (pass_ == Pass::forward ? mine.y : mine.x) = partial_of(v, base);
      return run_classes(0, pairs, mine, class_buffers(v, base), RowPart{v, layout_.workers});
    }
    if (layout_.mode == ParallelMode::channels && layout_.pixel_offsets) {
      return filter_channels_implicit(v, t, base);
    }
    if (layout_.mode == ParallelMode::channels) {
      const RowPart part{v, layout_.workers};
      ClassBuffers buffers = class_buffers(v, base);
      if (pass_ == Pass::backward_filter) {
        // Each worker sums its own rows of dW over every image: no partials.
        buffers.dw = t.w;
        const RowRange mine = part.share(p_.k_per_group(), cpu_gemm::kUnpackedSgemmRows);
        const int64_t row = col_rows(geometry_);
        for (int64_t group = 0; group < p_.groups; ++group) {
          float* rows = t.w + (group * p_.k_per_group() + mine.begin) * row;
          std::fill(rows, rows + (mine.end - mine.begin) * row, 0.0f);
        }
      }
      return run_classes(0, pairs, t, buffers, part);
    }
    const int64_t begin = pairs * v / layout_.workers, end = pairs * (v + 1) / layout_.workers;
    float* col = base + v * worker_floats();
    float* stage = col + layout_.col;
    float* gemm = stage + layout_.stage;
    // The implicit column buffer's row offsets in the padded image, or (backward-filter) its
    // columns' offsets in a chunk's padded images (the index buffer).
    auto* offsets = reinterpret_cast<int64_t*>(gemm + layout_.gemm);
    if (layout_.implicit && !layout_.pixel_offsets) {
      for (int64_t row = 0; row < col_rows(conv_geometry_); ++row) {
        offsets[row] = grid_tap_offset(conv_geometry_, layout_.grid, row);
      }
    }
    // The masked form's depth steps: each one's offset in the input and lane row, then the
    // taps' lane bits.
    if (layout_.masked) {
      const int64_t rows = col_rows(conv_geometry_);
      for (int64_t l = 0; l < rows; ++l) {
        const int64_t row = masked_depth_row(conv_geometry_, layout_.masked_block, l);
        offsets[l] = masked_tap_offset(conv_geometry_, row);
        offsets[rows + l] = masked_lane_row(conv_geometry_, row);
      }
      masked_lane_bits(conv_geometry_, masked_bits(offsets));
    }
    float* dw = t.w;
    // Backward-filter's products sum into dw, or transposed into dw_t (filter_sums).
    float* sums = dw;
    if (pass_ == Pass::backward_filter) {
      if (v > 0) dw = partial_of(v, base);
      sums = layout_.dw_transposed ? dw_t_of(v, base) : dw;
      std::fill(sums, sums + p_.w_elems(), 0.0f);
    }
    if (layout_.tap_classes) {
      ClassBuffers buffers = class_buffers(v, base);
      buffers.dw = dw;
      return run_classes(begin, end, t, buffers, RowPart());
    }
    for (int64_t q = begin; q < end;) {
      Chunk chunk;
      chunk.group = q / p_.n;
      chunk.image = q % p_.n;
      chunk.count = std::min({layout_.images_per_gemm, end - q, p_.n - chunk.image});
      switch (pass_) {
        case Pass::forward:
          convolve(
              chunk, t.x + x_offset(chunk),
              layout_.masked ? ordered_group(ordered_of(base), chunk.group) : t.w + w_offset(chunk),
              t.y + y_offset(chunk), col, stage, gemm, offsets);
          break;
        case Pass::backward_data:
          if (layout_.transposed) {
            // dx = the forward convolution of dy by the flipped filter.
            convolve(chunk, t.y + y_offset(chunk),
                     layout_.masked ? ordered_group(ordered_of(base), chunk.group)
                                    : flipped_group(flipped_of(base), chunk.group),
                     t.x + x_offset(chunk), col, stage, gemm, offsets);
          } else {
            backward_data(chunk, t, col, stage, gemm);
          }
          break;
        case Pass::backward_filter:
          if (layout_.pixel_offsets) {
            backward_filter_implicit(chunk, t, geometry_, col, stage, gemm, offsets,
                                     sums + w_offset(chunk));
          } else {
            backward_filter(chunk, t, col, stage, gemm, sums);
          }
          break;
      }
      q += chunk.count;
    }
    if (pass_ == Pass::backward_filter && layout_.dw_transposed) {
      // Each group's dW^T[C/g*R*S, K/g] into its rows of dW[K/g, C/g*R*S].
      const int64_t kg = p_.k_per_group(), rows = col_rows(geometry_);
      for (int64_t group = 0; group < p_.groups; ++group) {
        const int64_t at = group * kg * rows;
        cpu_gemm::transpose(isa(), rows, kg, sums + at, kg, dw + at, rows);
      }
    }
  }

  Im2colGeometry chunk_geometry(const Chunk& chunk) const {
    Im2colGeometry g = geometry_;
    g.images = chunk.count;
    return g;
  }
  int64_t x_offset(const Chunk& c) const {
    return c.image * geometry_.image_stride + group_offset(geometry_, c.group);
  }
  int64_t y_offset(const Chunk& c) const {
    return (c.image * p_.k + c.group * p_.k_per_group()) * col_pixels(geometry_);
  }
  int64_t w_offset(const Chunk& c) const {
    return c.group * p_.k_per_group() * col_rows(geometry_);
  }

  // dY of the chunk as a [Kg, b'*P] matrix: in place for one image, else staged.
  const float* dy_matrix(const Chunk& c, const Tensors& t, float* stage) const {
    const float* dy = t.y + y_offset(c);
    if (c.count == 1) return dy;
    gather_images(dy, p_.k_per_group(), col_pixels(geometry_), c.count, p_.k, stage);
    return stage;
  }

  // The forward convolution of the chunk's images: in = x, w the filter, out = y; or, for the
  // transposed backward-data (conv_geometry_), in = dy, w the flipped filter, out = dx. Each
  // image's output is out[rows of the GEMM, pixels], images apart by all the groups' channels.
  // The implicit form (one image) pads the image into `col` and reads the GEMM's B there
  // through the row offsets, block by block of grid columns into the stage.
  void convolve(const Chunk& c, const float* in, const float* w, float* out, float* col,
                float* stage, float* gemm, const int64_t* offsets) const {
    Im2colGeometry g = conv_geometry_;
    g.images = c.count;
    const int64_t m = layout_.transposed ? p_.c_per_group() : p_.k_per_group();
    const int64_t out_channels = layout_.transposed ? p_.c : p_.k;
    const int64_t rows = col_rows(g), pixels = col_pixels(g);
    if (layout_.masked) {
      // One GEMM from the input into the output, both in place (masked_tap_offset's rows).
      // Every float of the image's planes may be read where its lane is clear.
      const cpu_gemm::BLanes lanes{masked_bits(offsets), offsets + rows, in,
                                   in + g.channels * g.in_h * g.in_w};
      sgemm(backend_, false, false, m, pixels, rows, w, rows, in, 0, 0.0f, out, pixels,
            layout_.gemm_scratch, gemm, nullptr, offsets, &lanes);
      return;
    }
    if (layout_.implicit) {
      const PaddedGrid& grid = layout_.grid;
      pad_into_grid(g, grid, in, col);
      for (int64_t q0 = 0; q0 < grid.columns; q0 += layout_.tile) {
        const int64_t width = std::min(layout_.tile, grid.columns - q0);
        sgemm(backend_, false, false, m, width, rows, w, rows, col + q0, 0, 0.0f, stage, width,
              layout_.gemm_scratch, gemm, nullptr, offsets);
        scatter_grid_columns(g, grid, stage, m, q0, q0 + width, out);
      }
      return;
    }
    if (layout_.tile > 0) {
      // One image; y and dy are read in place at their row stride P.
      for (int64_t k = 0; k < pixel_block_count(pixels, layout_.tile); ++k) {
        const OutputRange block = pixel_block(pixels, layout_.tile, k);
        const int64_t width = block.end - block.begin;
        im2col_block_cpu(g, in, block.begin, block.end, col, width);
        sgemm(backend_, false, false, m, width, rows, w, rows, col, width, 0.0f,
              out + block.begin, pixels, layout_.gemm_scratch, gemm);
      }
      return;
    }
    const int64_t cols = col_cols(g);
    const float* b = in;  // pointwise: x_n is the column buffer
    if (!layout_.pointwise) {
      im2col_cpu(g, in, col);
      b = col;
    }
    float* product = c.count == 1 ? out : stage;
    sgemm(backend_, false, false, m, cols, rows, w, rows, b, cols, 0.0f, product, cols,
          layout_.gemm_scratch, gemm);
    if (c.count > 1) scatter_images(stage, m, pixels, c.count, out_channels, out);
  }

  void backward_data(const Chunk& c, const Tensors& t, float* col, float* stage,
                     float* gemm) const {
    if (layout_.tile > 0) return backward_data_tiled(c, t, col, gemm);
    const Im2colGeometry g = chunk_geometry(c);
    const int64_t kg = p_.k_per_group(), rows = col_rows(g), cols = col_cols(g);
    const float* dy = dy_matrix(c, t, stage);
    float* dx = t.x + x_offset(c);
    // Pointwise: dx_n [Cg, H*W] is col itself, written by the GEMM directly.
    float* out = layout_.pointwise ? dx : col;
    sgemm(backend_, true, false, rows, cols, kg, t.w + w_offset(c), rows, dy, cols, 0.0f, out, cols,
          layout_.gemm_scratch, gemm);
    if (!layout_.pointwise) col2im_cpu(g, col, dx);
  }

  // dW[Kg, L] += dY[Kg, n] * col[L, n]^T over one block of n pixels (row strides ld_dy and
  // ld_col), into `sums` at the chunk's group: dW itself, or dW^T[L, Kg] += col * dY^T where the
  // layout runs the product transposed (the same sums, each in the same blocks and order).
  void add_filter_product(const Chunk& c, int64_t n, const float* dy, int64_t ld_dy,
                          const float* col, int64_t ld_col, float* gemm, float* sums) const {
    const int64_t kg = p_.k_per_group(), rows = col_rows(geometry_);
    if (layout_.dw_transposed) {
      sgemm(backend_, false, true, rows, kg, n, col, ld_col, dy, ld_dy, 1.0f, sums + w_offset(c),
            kg, layout_.gemm_scratch, gemm);
    } else {
      sgemm(backend_, false, true, kg, rows, n, dy, ld_dy, col, ld_col, 1.0f, sums + w_offset(c),
            rows, layout_.gemm_scratch, gemm);
    }
  }

  void backward_filter(const Chunk& c, const Tensors& t, float* col, float* stage, float* gemm,
                       float* sums) const {
    if (layout_.tile > 0) return backward_filter_tiled(c, t, col, gemm, sums);
    const Im2colGeometry g = chunk_geometry(c);
    const int64_t cols = col_cols(g);
    const float* x = t.x + x_offset(c);
    const float* b = x;
    if (!layout_.pointwise) {
      im2col_cpu(g, x, col);
      b = col;
    }
    add_filter_product(c, cols, dy_matrix(c, t, stage), cols, b, cols, gemm, sums);
  }

  // Tiled (one image, b = 1): the same GEMMs cut along the output pixels into blocks of
  // layout_.tile columns; dy is read in place at its row stride P.
  void backward_data_tiled(const Chunk& c, const Tensors& t, float* col, float* gemm) const {
    const int64_t kg = p_.k_per_group(), rows = col_rows(geometry_), pixels = col_pixels(geometry_);
    const float* dy = t.y + y_offset(c);
    float* dx = t.x + x_offset(c);
    // The blocks add into dx, so the group's planes of this image start at zero.
    std::fill(dx, dx + geometry_.channels * plane_elems(geometry_), 0.0f);
    for (int64_t k = 0; k < pixel_block_count(pixels, layout_.tile); ++k) {
      const OutputRange block = pixel_block(pixels, layout_.tile, k);
      const int64_t width = block.end - block.begin;
      sgemm(backend_, true, false, rows, width, kg, t.w + w_offset(c), rows, dy + block.begin,
            pixels, 0.0f, col, width, layout_.gemm_scratch, gemm);
      col2im_block_add_cpu(geometry_, col, width, block.begin, block.end, dx);
    }
  }

  void backward_filter_tiled(const Chunk& c, const Tensors& t, float* col, float* gemm,
                             float* sums) const {
    const int64_t pixels = col_pixels(geometry_);
    const float* x = t.x + x_offset(c);
    const float* dy = t.y + y_offset(c);
    for (int64_t k = 0; k < pixel_block_count(pixels, layout_.tile); ++k) {
      const OutputRange block = pixel_block(pixels, layout_.tile, k);
      const int64_t width = block.end - block.begin;
      im2col_block_cpu(geometry_, x, block.begin, block.end, col, width);
      add_filter_product(c, width, dy + block.begin, pixels, col, width, gemm, sums);
    }
  }

  // The implicit form: the chunk's images padded into `grid` one after another; per block of
  // pixels (a tile of one image, or all of the chunk's), per depth block of it, the pixels'
  // offsets in the padded images and dY's rows of those pixels transposed into `stage`, then
  // per tap (i, j) dW^T's rows (c, i, j) += the padded images' channels read at those offsets
  // times the stage. Each GEMM sums one depth block, where the column buffer's GEMM sums the
  // same block of its columns: the same sums in the same order.
  // `g` is the geometry's channels from `first_channel` on (all of them, or a channels-mode
  // worker's share) and `dw_t` the chunk's group's rows of them in dW^T, R*S*K/g floats each.
  void backward_filter_implicit(const Chunk& c, const Tensors& t, const Im2colGeometry& g,
                                float* grid, float* stage, float* gemm, int64_t* offsets,
                                float* dw_t, int64_t first_channel = 0) const {
    const int64_t kg = p_.k_per_group(), pixels = col_pixels(geometry_);
    const int64_t taps = p_.r * p_.s, plane = layout_.grid.plane;
    const int64_t image_grid = padded_grid_elems(g, layout_.grid);
    const float* x = t.x + x_offset(c) + first_channel * plane_elems(geometry_);
    for (int64_t m = 0; m < c.count; ++m) {
      pad_into_grid(g, layout_.grid, x + m * geometry_.image_stride, grid + m * image_grid);
    }
    const float* dy = t.y + y_offset(c);
    const int64_t columns = c.count * pixels;
    const int64_t block = layout_.tile > 0 ? layout_.tile : columns;
    for (int64_t b0 = 0; b0 < columns; b0 += block) {
      const int64_t b1 = std::min(columns, b0 + block);
      for (int64_t l0 = b0; l0 < b1; l0 += cpu_gemm::kUnpackedSgemmDepth) {
        const int64_t depth = std::min(cpu_gemm::kUnpackedSgemmDepth, b1 - l0);
        grid_pixel_offsets(g, layout_.grid, l0, depth, offsets);
        // dY^T[depth, Kg]: the block's pixels, image by image (images are K*P floats apart).
        for (int64_t l = l0; l < l0 + depth;) {
          const int64_t image = l / pixels, pixel = l % pixels;
          const int64_t run = std::min(pixels - pixel, l0 + depth - l);
          cpu_gemm::transpose(isa(), kg, run, dy + image * p_.k * pixels + pixel, pixels,
                              stage + (l - l0) * kg, kg);
          l += run;
        }
        for (int64_t tap = 0; tap < taps; ++tap) {
          sgemm(backend_, false, false, g.channels, kg, depth,
                grid + grid_tap_offset(g, layout_.grid, tap), plane, stage, kg, 1.0f,
                dw_t + tap * kg, taps * kg, layout_.gemm_scratch, gemm, offsets);
        }
      }
    }
  }

  // Channels mode of the implicit backward-filter: worker v sums its share of the input
  // channels' rows of dW^T over every image, in the chunks and depth blocks of one thread (so
  // each element of dW has the one-thread bits whatever the thread count), and transposes them
  // into its columns of dW.
  void filter_channels_implicit(int64_t v, const Tensors& t, float* base) const {
    const RowRange mine =
        RowPart{v, layout_.workers}.share(geometry_.channels, cpu_gemm::kUnpackedSgemmRows);
    if (mine.begin == mine.end) return;
    Im2colGeometry g = geometry_;
    g.channels = mine.end - mine.begin;
    float* grid = base + v * worker_floats();
    float* stage = grid + layout_.col;
    float* gemm = stage + layout_.stage;
    auto* offsets = reinterpret_cast<int64_t*>(gemm + layout_.gemm);
    float* dw_t = dw_t_of(v, base);
    const int64_t kg = p_.k_per_group(), taps = p_.r * p_.s;
    const int64_t group_rows = g.channels * taps;  // the worker's rows of one group's dW^T
    std::fill(dw_t, dw_t + p_.groups * group_rows * kg, 0.0f);
    const int64_t pairs = p_.groups * p_.n;
    for (int64_t q = 0; q < pairs;) {
      Chunk chunk;
      chunk.group = q / p_.n;
      chunk.image = q % p_.n;
      chunk.count = std::min(layout_.images_per_gemm, p_.n - chunk.image);
      backward_filter_implicit(chunk, t, g, grid, stage, gemm, offsets,
                               dw_t + chunk.group * group_rows * kg, mine.begin);
      q += chunk.count;
    }
    const int64_t rows = col_rows(geometry_);
    for (int64_t group = 0; group < p_.groups; ++group) {
      cpu_gemm::transpose(isa(), group_rows, kg, dw_t + group * group_rows * kg, kg,
                          t.w + group * kg * rows + mine.begin * taps, rows);
    }
  }

  // Tap classes: the pairs [begin, end) by runs of one group's images; per run, each class
  // over those images in chunks of its own images per GEMM. Backward-data adds the classes
  // into dx, so the run's images start at zero. `part` is the share of every class GEMM's
  // output rows this worker computes (channels mode; all of them otherwise).
  void run_classes(int64_t begin, int64_t end, const Tensors& t, const ClassBuffers& b,
                   const RowPart& part) const {
    for (int64_t q = begin; q < end;) {
      Chunk run;
      run.group = q / p_.n;
      run.image = q % p_.n;
      run.count = std::min(end - q, p_.n - run.image);
      if (pass_ == Pass::backward_data && !layout_.transposed) {
        // A part adds only into its own channels of dx, so it zeroes those.
        const RowRange mine = part.share(geometry_.channels);
        const int64_t plane = plane_elems(geometry_);
        for (int64_t m = 0; m < run.count; ++m) {
          float* planes = t.x + x_offset(run) + m * geometry_.image_stride;
          std::fill(planes + mine.begin * plane, planes + mine.end * plane, 0.0f);
        }
      }
      if (pass_ == Pass::backward_filter) {
        filter_classes(run, t, b, part);
        q += run.count;
        continue;
      }
      for (std::size_t k = 0; k < classes_.size(); ++k) {
        if (layout_.transposed) {
          flipped_tap_offsets(p_, conv_geometry_, classes_[k], b.index);
        } else {
          tap_class_rows(conv_geometry_, classes_[k], b.index);
        }
        for_each_chunk(run, k, [&](const Chunk& chunk, int64_t) {
          if (pass_ == Pass::forward) {
            multiply_class(classes_[k], chunk.count, t.x + x_offset(chunk), t.w + w_offset(chunk),
                           col_rows(geometry_), p_.k, t.y + y_offset(chunk), b, part);
          } else if (layout_.transposed) {
            // dx = the forward convolution of dy by the flipped filter, read from w in place:
            // dx channel c's row is w's R*S taps of input channel c.
            multiply_class(classes_[k], chunk.count, t.y + y_offset(chunk),
                           t.w + w_offset(chunk), p_.r * p_.s, p_.c, t.x + x_offset(chunk), b,
                           part);
          } else {
            backward_data_class(classes_[k], chunk, t, b, part);
          }
        });
      }
      q += run.count;
    }
  }

  // One class of the class geometry over `images` images: the column buffer of the class's
  // taps of `in` only, one GEMM that reads the filter's columns of those taps through the
  // index (row stride `lda`), and the class's pixels of `out` (out_channels channels per
  // image) written from the stage. Forward: in = x, out = y. Transposed backward-data: in =
  // dy, out = dx, the filter read flipped and transposed. The column buffer is built one block
  // of input channels at a time, each multiplied while it is in cache and added into the stage
  // (beta 1 after the first block); the GEMM, stage and output cover the part's rows (channels
  // mode), or all rows for the part's blocks of channels (in_channels mode: every pixel of the
  // class is still written, zero where the part has no block).
  void multiply_class(const TapClass& tc, int64_t images, const float* in, const float* w,
                      int64_t lda, int64_t out_channels, float* out, const ClassBuffers& b,
                      const RowPart& part) const {
    Im2colGeometry g = conv_geometry_;
    g.images = images;
    const int64_t out_rows = layout_.transposed ? p_.c_per_group() : p_.k_per_group();
    const int64_t taps = class_taps(tc), cols = images * class_pixels(tc);
    const int64_t pitch = class_row_pitch(cols);  // the column buffer's rows, B's
    const bool split_depth = layout_.mode == ParallelMode::in_channels;
    const RowRange mine =
        split_depth ? RowRange{0, out_rows} : part.share(out_rows, cpu_gemm::kUnpackedSgemmRows);
    if (cols == 0 || mine.end <= mine.begin) return;
    float* stage = b.stage + mine.begin * cols;
    // in_channels mode: the part's even share of the channels, in blocks of even size (whole
    // blocks split unevenly idle a worker: GoogLeNet's inception_5b forward, 192 channels in 7
    // blocks split 4 to 3, ran 11 % slower so). Otherwise all channels in full-size blocks.
    const RowRange own = split_depth ? part.share(g.channels) : RowRange{0, g.channels};
    const int64_t block = class_channel_block(g.channels, taps);
    const int64_t n = own.end - own.begin, blocks = taps == 0 ? 0 : (n + block - 1) / block;
    const auto block_begin = [&](int64_t k) {
      return std::min(own.end, own.begin + (split_depth ? n * k / blocks : k * block));
    };
    if (blocks == 0) {
      // Every tap of these pixels reads padding, or the other parts have every channel.
      std::fill(stage, stage + (mine.end - mine.begin) * cols, 0.0f);
    }
    for (int64_t k = 0; k < blocks; ++k) {
      const int64_t c0 = block_begin(k);
      Im2colGeometry channels = g;
      channels.channels = block_begin(k + 1) - c0;
      im2col_class_cpu(channels, tc, in + c0 * plane_elems(g), b.col, pitch, isa());
      sgemm(backend_, false, false, mine.end - mine.begin, cols, channels.channels * taps,
            w + mine.begin * lda, lda, b.col, pitch, k == 0 ? 0.0f : 1.0f, stage, cols,
            layout_.gemm_scratch, b.gemm, b.index + c0 * taps);
    }
    scatter_class(g, tc, stage, mine.end - mine.begin, out_channels,
                  out + mine.begin * g.out_h * g.out_w, isa());
  }

  // The chunks of one class over a run of images, in order, as many as the class's images per
  // GEMM gives, of even size: f(chunk, the chunk's GEMM columns).
  template <class F>
  void for_each_chunk(const Chunk& run, std::size_t k, F&& f) const {
    const int64_t most = layout_.class_images[k];
    int64_t chunks = (run.count + most - 1) / most;
    for (int64_t m = 0; m < run.count; --chunks) {
      Chunk chunk = run;
      chunk.image = run.image + m;
      chunk.count = (run.count - m + chunks - 1) / chunks;  // never above `most`
      f(chunk, chunk.count * class_pixels(classes_[k]));
      m += chunk.count;
    }
  }

  // Backward-filter over a run of one group's images: dW[Kg, class taps] += dY[Kg, class
  // pixels] * col^T per class. dY is staged once, class by class and chunk by chunk (the run's
  // dY, reordered); then per block of input channels, every class and chunk: the block's
  // column buffer of the class, its product into the panel, and the panel added into dW's
  // columns of the class's taps. A class's GEMM cannot write those columns itself (|taps_w|
  // floats in a row, R*S apart); with the blocks outermost the dW rows of one block (K/g x
  // channels x R*S) stay in cache while every class adds into them, where one pass over the
  // whole dW per class and chunk cost more than the skipped products saved. The corners of the
  // merged classes multiply a few padding zeros by dY, as taps=all multiplies every one.
  void filter_classes(const Chunk& run, const Tensors& t, const ClassBuffers& b,
                      const RowPart& part) const {
    const RowRange mine = part.share(p_.k_per_group(), cpu_gemm::kUnpackedSgemmRows);
    const int64_t kg = mine.end - mine.begin, filter_row = col_rows(geometry_);
    const int64_t rs = p_.r * p_.s, out_plane = geometry_.out_h * geometry_.out_w;
    if (kg <= 0) return;
    float* stage = b.stage;
    for (std::size_t k = 0; k < classes_.size(); ++k) {
      for_each_chunk(run, k, [&](const Chunk& chunk, int64_t cols) {
        gather_class(chunk_geometry(chunk), classes_[k],
                     t.y + y_offset(chunk) + mine.begin * out_plane, kg, p_.k, stage, isa());
        stage += kg * cols;
      });
    }
    float* dw = b.dw + w_offset(run) + mine.begin * filter_row;
    const int64_t block = layout_.filter_block;
    for (int64_t c0 = 0; c0 < geometry_.channels; c0 += block) {
      const int64_t nb = std::min(block, geometry_.channels - c0);
      const float* dy = b.stage;
      for (std::size_t k = 0; k < classes_.size(); ++k) {
        const TapClass& tc = classes_[k];
        const int64_t taps = class_taps(tc), n = nb * taps;
        // A class of every tap (the interior) owns the block's columns whole: its GEMM adds
        // into dW in place.
        const bool whole = taps == rs;
        for_each_chunk(run, k, [&](const Chunk& chunk, int64_t cols) {
          if (cols > 0 && taps > 0) {
            Im2colGeometry g = chunk_geometry(chunk);
            g.channels = nb;
            im2col_class_cpu(g, tc, t.x + x_offset(chunk) + c0 * plane_elems(g), b.col, cols,
                             isa());
            float* block_dw = dw + c0 * rs;
            if (whole) {
              sgemm(backend_, false, true, kg, n, cols, dy, cols, b.col, cols, 1.0f, block_dw,
                    filter_row, layout_.gemm_scratch, b.gemm);
            } else {
              sgemm(backend_, false, true, kg, n, cols, dy, cols, b.col, cols, 0.0f, b.panel, n,
                    layout_.gemm_scratch, b.gemm);
              add_class_filter_columns(g, tc, nb, b.panel, kg, block_dw, filter_row, isa());
            }
          }
          dy += kg * cols;
        });
      }
    }
  }

  // The adjoint: dY's pixels of the class staged, the class's taps' rows of col = W^T dY (the
  // filter's columns through the index), added into dx; the GEMM and col2im over the part's
  // dx channels.
  void backward_data_class(const TapClass& tc, const Chunk& c, const Tensors& t,
                           const ClassBuffers& b, const RowPart& part) const {
    const Im2colGeometry g = chunk_geometry(c);
    const int64_t kg = p_.k_per_group(), taps = class_taps(tc);
    const int64_t cols = c.count * class_pixels(tc);
    const RowRange mine = part.share(g.channels);
    if (cols == 0 || taps == 0 || mine.end <= mine.begin) return;
    gather_class(g, tc, t.y + y_offset(c), kg, p_.k, b.stage, isa());
    Im2colGeometry channels = g;
    channels.channels = mine.end - mine.begin;
    sgemm(backend_, true, false, channels.channels * taps, cols, kg, t.w + w_offset(c),
          col_rows(g), b.stage, cols, 0.0f, b.col, cols, layout_.gemm_scratch, b.gemm,
          b.index + mine.begin * taps);
    col2im_class_add_cpu(channels, tc, b.col, t.x + x_offset(c) + mine.begin * plane_elems(g),
                         isa());
  }

  ConvProblem p_;
  Pass pass_;
  GemmBackend backend_;
  Im2colLayout layout_;
  Im2colGeometry geometry_;
  // The convolution the GEMMs run: geometry_, or the transposed one (backward-data).
  Im2colGeometry conv_geometry_;
  std::vector<TapClass> classes_;
};

}  // namespace

namespace {

AlgorithmInfo im2col_info(std::vector<KnobSpec> knobs) {
  AlgorithmInfo info;
  info.name = kName;
  info.device = Device::cpu;
  info.family = Family::gemm;
  GemmBackend backend = default_gemm_backend();
  try {
    backend = Im2colOptions::from_knobs(resolve_knobs(kName, knobs, {})).backend;
  } catch (const Error&) {
    // A malformed environment default: plan() reports it, naming the variable.
  }
  info.backend = to_string(backend);
  info.description = std::string("im2col/col2im-gather + GEMM (") + to_string(backend) +
                     "), per group, 1x1 shortcut, images per GEMM, tap classes that skip the "
                     "padding";
  info.deterministic = true;
  info.knobs = std::move(knobs);
  return info;
}

}  // namespace

CpuIm2col::CpuIm2col() : info_(im2col_info(Im2colOptions{}.schema())) {}

CpuIm2col::CpuIm2col(const Im2colOptions& defaults)
    : info_([&] {
        std::vector<KnobSpec> knobs = defaults.schema();
        for (KnobSpec& k : knobs) k.environment_default.clear();
        return im2col_info(std::move(knobs));
      }()) {}

Im2colOptions CpuIm2col::options() const {
  return Im2colOptions::from_knobs(resolve_knobs(kName, info_.knobs, {}));
}

Support CpuIm2col::supports(const ConvProblem& p, Pass pass) const {
  p.validate();
  return supports_with(p, pass, options());
}

Support CpuIm2col::supports_with(const ConvProblem& p, Pass pass,
                                 const Im2colOptions& options) const {
  const GemmBackend backend = options.backend;
  if (!gemm_backend_available(backend)) {
    return Support::no(std::string(kName) + ": GEMM backend " + to_string(backend) +
                       " is not built in");
  }
  // OpenBLAS takes 32-bit GEMM dimensions: the widest are one image's pixels (b is capped at
  // INT_MAX / pixels when planned), the column rows C/g*R*S, K/g and, 1x1, H*W.
  if (backend == GemmBackend::openblas) {
    const int64_t pixels = p.out_h() * p.out_w();
    const int64_t rows = p.c_per_group() * p.r * p.s;
    for (int64_t extent : {pixels, rows, p.k_per_group(), p.h * p.w}) {
      if (extent > INT_MAX) {
        return Support::no(std::string(kName) + " " + p.descriptor() + ": GEMM dimension " +
                           std::to_string(extent) + " exceeds OpenBLAS's 32-bit limit " +
                           std::to_string(INT_MAX));
      }
    }
  }
  if (options.taps == TapMode::in_image) {
    const std::string refusal = tap_classes_refusal(options);
    if (!refusal.empty()) {
      return Support::no(std::string(kName) + " taps=in_image " + p.descriptor() + " " +
                         to_string(pass) + ": " + refusal);
    }
  }
  // The channels modes need the tap classes, which taps=auto takes or not by the layer (and
  // in_channels their forward GEMMs), the transposed backward-data a stride of 1 and, with
  // every tap, no more padding than the problem's, the forms that read the column buffer in
  // place theirs: the layout knows.
  if (options.parallel == ParallelMode::channels || options.parallel == ParallelMode::in_channels ||
      options.columns == ColumnForm::implicit || options.columns == ColumnForm::masked ||
      (pass == Pass::backward_data && options.bwd_data == DataForm::transposed)) {
    try {
      (void)im2col_layout(p, pass, options, num_threads());
    } catch (const Error& e) {
      if (e.code() != ErrorCode::unsupported) throw;
      return Support::no(e.what());
    }
  }
  return Support::yes();
}

std::unique_ptr<Plan> CpuIm2col::make_plan(const ConvProblem& p, Pass pass,
                                           const KnobValues& knobs) const {
  p.validate();
  const Im2colOptions opts = Im2colOptions::from_knobs(knobs);
  const Support support = supports_with(p, pass, opts);
  if (!support) throw Error(ErrorCode::unsupported, support.reason);
  const Im2colLayout layout = im2col_layout(p, pass, opts, num_threads());
  return std::make_unique<Im2colPlan>(p, pass, opts, layout);
}

ErrorBound CpuIm2col::error_bound(const ConvProblem& p, Pass pass) const {
  // Each output is a sum of products rounded in fp32 along a chain of at most L additions:
  // forward L = C/g*R*S (one GEMM dot product); backward-data L = K/g + R*S (a K/g dot
  // product per tap, then at most R*S taps gathered), or K/g*R*S for stride 1 (below);
  // backward-filter L = 2*N*OH*OW + T (the GEMM's inner dimension b*OH*OW, accumulated over
  // the chunks, plus the T partials; under tap classes each class's chunk sum is one more
  // addition, and every chunk holds at least one of the N*OH*OW pixels).
  // Higham & Mary's probabilistic analysis (SIAM J. Sci. Comput. 41(5), 2019, Thm 3.1 and
  // its Hoeffding form): with independent mean-zero rounding errors |e| <= lambda*sqrt(L)*
  // u*sum|a||b| except with probability 2*exp(-lambda^2/2); lambda = 6 makes that 3e-8 per
  // output. One more u covers the rounding of the exact sum to fp32 (the reference rounds
  // its double sum too). A dropped or doubled term errs by about sum|a||b|/L, more than this
  // bound by a factor of 2^24 / (6 L^1.5): every indexing mistake still fails.
  double chain = 0;
  switch (pass) {
    case Pass::forward: chain = double(p.c_per_group()) * p.r * p.s; break;
    case Pass::backward_data:
      // The gather sums K/g-long dot products over up to R*S taps; with stride 1 the tap
      // classes may instead make each dx element one dot product over K/g times its taps.
      chain =
          std::max(double(p.k_per_group()) + double(p.r) * p.s,
                   p.stride_h == 1 && p.stride_w == 1 ? double(p.k_per_group()) * p.r * p.s : 0.0);
      break;
    case Pass::backward_filter:
      chain = 2.0 * double(p.n) * p.out_h() * p.out_w() + num_threads();
      break;
  }
  return ErrorBound{ErrorBound::Kind::elementwise, 6.0 * std::sqrt(chain) + 2.0, 0.0};
}

DeviceContext& CpuIm2col::context() const { return host_context(); }

}  // namespace convlab::im2col

namespace convlab {

void register_cpu_im2col(Registry& registry) {
  registry.add(std::make_unique<im2col::CpuIm2col>());
}

}  // namespace convlab
