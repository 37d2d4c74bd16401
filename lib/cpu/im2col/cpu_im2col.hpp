#pragma once
// cpu.im2col internals: its settings, the workspace layout of a plan (the formula of
// docs/strategy-im2col.md, in code) and the Algorithm class. Not a public header; the
// tests and bench/micro include it to set options the registry's instance takes from the
// environment.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convlab/algorithm.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "gemm.hpp"
#include "strategy/im2col_padded_grid.hpp"
#include "strategy/im2col_tap_classes.hpp"

namespace convlab::im2col {

/// How a run uses its threads. Never both levels at once (no oversubscription).
enum class ParallelMode {
  automatic,  ///< channels where it pays under tap classes (kChannelsMinShortShare), as
              ///< in_channels where that pays (kInChannelsMinChannels), else images when the
              ///< (image, group) pairs split evenly enough, else gemm
  images,     ///< the threads take disjoint (image, group) slices; each GEMM single-threaded
  gemm,       ///< one slice after another; the GEMM library uses every thread
  /// Tap classes: every thread runs every image, for its share of each class GEMM's
  /// output rows (output channels), with a single-threaded GEMM and its own buffers, so that
  /// each GEMM is as wide as with one thread (images mode halves a narrow class's columns at
  /// two threads: a 7x7 image's corner classes to 8). Each thread copies every column buffer.
  /// Backward-filter's implicit form (pixel_offsets): every thread runs every image for its
  /// share of the input channels, padding only those and summing its own rows of dW^T.
  channels,
  /// Tap classes, forward and transposed backward-data only: every thread runs every image
  /// for its even share of each class GEMM's input channels (the GEMM's depth), all output
  /// rows, into its own copy of the output (thread 0 into y or dx, the others into partials
  /// of the workspace), added in thread order after one barrier. Each thread copies only its
  /// channels' columns; the sums' order, and so the bits, depend on the thread count.
  in_channels,
};
const char* to_string(ParallelMode mode) noexcept;

/// Which taps the GEMMs multiply (strategy/im2col_tap_classes.hpp).
enum class TapMode {
  automatic,  ///< in_image where it applies and saves at least kTapClassMinSaving
  all,        ///< one column buffer of every tap, padding as zeros
  in_image,   ///< tap classes: each class's GEMM over the taps that read inside the image
};
const char* to_string(TapMode mode) noexcept;

/// How backward-data computes dx.
enum class DataForm {
  /// transposed under tap classes (stride 1), and with every tap where the problem pads as
  /// much as the transposed convolution (transposed_all_taps_refusal) and either K/g <= C/g
  /// (its column buffer, K/g*R*S rows, is then no larger than col2im's) or the implicit form
  /// will read that buffer in place, with C/g >= kImplicitMinChannels. Measured on ResNet-50's
  /// 56x56 and 28x28 and VGG-16's conv2_2 and conv4_2 3x3 layers (K = C), where it ran faster;
  /// on AlexNet's conv2 (K = 3C), slower with the buffer and faster read in place, as on
  /// VGG-16's conv2_1 to conv4_1 (K = 2C) (docs/strategy-im2col.md). Else col2im.
  automatic,
  col2im,      ///< the adjoint: col = W^T dY, then col2im adds the taps back into dx
  transposed,  ///< stride 1 only: dx = dy convolved with the flipped filter, no col2im
};
const char* to_string(DataForm form) noexcept;

/// Where the GEMM reads the column buffer from (strategy/im2col_padded_grid.hpp,
/// strategy/im2col_masked_columns.hpp).
enum class ColumnForm {
  /// Forward and the transposed backward-data where they are tiled (images of more than
  /// kUnpackedTargetColumns pixels): masked where it applies (output rows as wide as the
  /// input's), kMaskedMinRowsPerOutputRow holds and masked_columns_by_default (AVX-512, an
  /// AMD CPU), else implicit where it saves more copying
  /// than it costs
  /// (kImplicitMaxExtraShare, kImplicitMaxExtraProducts, kImplicitMinRowsPerOutputRow).
  /// Backward-filter: implicit where the padded images are smaller than the column buffer
  /// (kImplicitMinChannels). Else buffer.
  automatic,
  buffer,  ///< im2col copies every tap's row into the column buffer
  /// gemm=unpacked, every tap: each image padded once, the GEMM reading the column buffer
  /// where it lies in that padded image. Forward and the transposed backward-data (stride 1)
  /// read each of its rows as a run of the image; backward-filter (any stride) reads each of
  /// its columns at the output pixel's offset, one GEMM per tap.
  implicit,
  /// gemm=unpacked, every tap, forward and the transposed backward-data with stride 1 and
  /// output rows as wide as the input's (OW = W): the GEMM reads the column buffer's rows in x
  /// itself, unpadded, the lanes in the padding masked off, and writes y in place; no copy of
  /// either, no extra columns (strategy/im2col_masked_columns.hpp).
  masked,
};
const char* to_string(ColumnForm form) noexcept;

/// columns=auto takes the implicit form where its extra columns (P - OW after each output row,
/// P the grid's pitch) add at most this share to the GEMM's columns...
inline constexpr double kImplicitMaxExtraShare = 0.15;
/// ...and where, per element of the column buffer it does not copy, they add at most this many
/// products (the extra share times the GEMM's rows, K/g or, transposed, C/g). Measured on the
/// Intel Xeon VM (docs/strategy-im2col.md, "Implicit columns"). With rows of their own padding
/// (P = Wp): faster on ResNet-50's 56x56 and 28x28 3x3 layers (2.2 and 8.8), VGG-16's conv2_2
/// and conv3_2 (2.3, 9.0) and AlexNet's conv2 forward (14.3 % extra, 27.4); slower on VGG-16's
/// conv4_2 (6.9 % extra at 512 rows, 35.3), whose GEMM dwarfs the copy it saves. With the
/// padding shared between rows, conv4_2's 3.4 % (17.6) ran faster than the buffer.
inline constexpr double kImplicitMaxExtraProducts = 32.0;
/// ...and where the column buffer has at least this many rows per row of the GEMM's output:
/// per column, the implicit form copies the output's rows out of its stage where the buffer
/// form copied the column buffer's rows in. VGG-16's conv1_1 (27 column rows, 64 output rows)
/// ran its forward pass 2x slower implicit (docs/strategy-im2col.md, "Implicit columns").
inline constexpr int64_t kImplicitMinRowsPerOutputRow = 2;
/// columns=auto takes the masked form where the column buffer has at least this many rows
/// per row of the GEMM's output. On the AMD EPYC VM (one thread, forward) VGG-16's conv1_1 (27
/// column rows, 64 output rows, 224x224) ran 1.08-1.14x slower masked than with the buffer,
/// and 4 channels at 224x224 (36 rows) as fast; at 112x112, 3 to 16 channels ran 0.63-1.00x
/// of the buffer's time (docs/strategy-im2col.md, "Masked columns"). The rule keeps every
/// layer measured slower on the buffer, and some faster ones with it.
inline constexpr int64_t kMaskedMinRowsPerOutputRow = 2;

/// Whether columns=auto may take the masked form for the unpacked GEMM's build for `isa` on
/// this CPU: where that build masks its loads natively (unpacked_sgemm_native_lane_loads:
/// AVX-512), on AMD's CPUs. Against the implicit form, the masked one ran ResNet-50's 56x56
/// and 28x28 layers, VGG-16's conv1_2 to conv4_2 and AlexNet's conv2 (forward and backward-
/// data) in 0.94x the time on the AMD EPYC VM (Zen 4), and the same 22 cases in 1.07-1.25x
/// the time at one thread, 1.01-1.27x at two, on the Intel Xeon VM (KVM: family 6, model
/// 167; AVX-512 and AMX). Neither masked FMAs in place of the masked loads nor the other
/// causes tried there explained it (docs/strategy-im2col.md, "Masked columns"), so the rule
/// follows the vendor of the two CPUs measured, and a CPU of neither takes the implicit form.
bool masked_columns_by_default(CpuIsa isa);

/// The implicit forms whose GEMMs have the input channels (C/g) as rows: backward-filter's, one
/// GEMM per tap, and the transposed backward-data, which auto takes with K/g > C/g only for
/// the implicit form's sake (DataForm::automatic). columns=auto and bwd_data=auto want at
/// least this many: a GEMM of fewer rows runs mostly in the unpacked GEMM's narrow edge
/// tiles. VGG-16's conv1_1 and AlexNet's conv1 (3 channels) ran slower so, the layers of 64
/// channels or more faster (docs/strategy-im2col.md, "Implicit columns"); 32 lies between
/// them, untested.
inline constexpr int64_t kImplicitMinChannels = 32;

/// Rows of dY^T that backward-filter's implicit form transposes and multiplies at once: one
/// depth block of the unpacked GEMM, or the whole block of `columns` pixels where it is
/// shorter. The column buffer's GEMM sums in the same blocks.
inline int64_t filter_depth_block(int64_t columns) {
  return std::min<int64_t>(columns, cpu_gemm::kUnpackedSgemmDepth);
}

/// taps=auto takes the tap classes where they leave out at least this share of the products:
/// they were measured faster on ResNet-50's 14x14 and 7x7 3x3 layers, which skip 8.8 % and
/// 16.3 % (docs/strategy-im2col.md, "Tap classes"); below 5 % their extra copies and narrower
/// GEMMs have not been shown to pay...
inline constexpr double kTapClassMinSaving = 0.05;
/// ...and come in at most this many classes: a kernel as wide as the image with as much
/// padding gives a class per output row, GEMMs too narrow to pay (a "same" 7x7 kernel gives 13).
inline constexpr int64_t kTapClassMaxAuto = 16;
/// Backward-filter's classes add each class's product into dW's scattered columns, which
/// costs more, so there they must skip at least this share: they were measured faster on
/// ResNet-50's 7x7 layer (16.3 % of the products skipped) and not on its 14x14 (8.8 %)
/// (docs/strategy-im2col.md, "Tap classes"); the threshold lies between those two.
inline constexpr double kTapClassMinSavingFilter = 0.12;

/// parallel=auto takes channels mode in backward-filter under tap classes (its workers then
/// sum disjoint rows of dW), and in the other passes where images mode would leave at least
/// kChannelsMinShortShare of the class products in GEMMs narrower than kClassTargetColumns
/// (a worker's images fall short of what the class batches at one thread, so each worker
/// re-reads the filter for fewer columns), and every part gets at least kChannelPartMinRows
/// of a class GEMM's output rows (8 register tiles). Measured at two threads
/// (docs/strategy-im2col.md, "Channels mode"): ResNet-50's 7x7 layer (every class short at 8
/// images) gains in backward-data and runs even in forward; its 14x14 layer (19 % of the
/// products short) and AlexNet's 13x13 layers (21 %) lose in backward-data.
inline constexpr double kChannelsMinShortShare = 0.5;
inline constexpr int64_t kChannelPartMinRows = 48;
/// ...and takes in_channels mode instead where channels mode would pay in forward or the
/// transposed backward-data, the class GEMMs have at least as many input channels (x's C/g,
/// or dy's K/g) as output rows, and each worker gets at least this many of them. Measured at
/// two threads (docs/strategy-im2col.md, "Channels mode"): faster on ResNet-50's 7x7 layer
/// (512 channels in and out) and GoogLeNet's inception_5a/5b 3x3 backward-data (twice as many
/// in as out, 160 and 192 a worker); its forward (half as many in as out) ran faster in some
/// runs and slower in others. Fewer channels a worker are untested.
inline constexpr int64_t kInChannelsMinChannels = 64;

/// ...and in backward-filter's implicit form (every tap) where each of the threads gets at
/// least this many input channels: each worker then sums its own rows of dW^T over every
/// image, no partial dW to add, and its share of dW^T stays in its cache where the whole did
/// not (2.25 MiB at 256 channels). Measured at two threads (docs/strategy-im2col.md,
/// "Backward-filter split by input channels").
inline constexpr int64_t kFilterChannelsMinChannels = 128;

/// Rows [begin, end) of a matrix or channels of a tensor.
struct RowRange {
  int64_t begin = 0, end = 0;
};

/// Part `index` of `parts` of n rows, cut at multiples of `unit` (the unpacked GEMM's register
/// tile rows, where the split allows): the channels modes' split, for the run and the layout.
inline RowRange row_part(int64_t n, int64_t index, int64_t parts, int64_t unit) {
  const int64_t units = (n + unit - 1) / unit;
  return {std::min(n, units * index / parts * unit),
          std::min(n, units * (index + 1) / parts * unit)};
}

/// The rows of the largest of `parts` parts of n rows cut as the channels modes cut them.
inline int64_t largest_channel_part(int64_t n, int64_t parts) {
  int64_t largest = 0;
  for (int64_t index = 0; index < parts; ++index) {
    const RowRange part = row_part(n, index, parts, cpu_gemm::kUnpackedSgemmRows);
    largest = std::max(largest, part.end - part.begin);
  }
  return largest;
}

/// The row pitch of a tap class's column buffer where the unpacked GEMM reads it as B
/// (forward and the transposed backward-data): its `columns` rounded up to whole 64-byte lines,
/// so that every row starts a line and no vector load of B straddles two. On the Intel Xeon VM
/// (family 6 model 167) a product of AlexNet conv3's interior class shape, 384 x 363 x 2304,
/// ran 167 GFLOP/s with rows 363 floats apart and 200 at 368 (bench/micro/gemm_kernels,
/// gemm_pitch; docs/strategy-im2col.md, "Tap classes").
inline int64_t class_row_pitch(int64_t columns) { return (columns + 15) / 16 * 16; }

/// Im2colOptions::tile: chosen for the GEMM backend when planned.
inline constexpr int64_t kAutoTile = -1;

/// The settings of cpu.im2col.
struct Im2colOptions {
  /// Images sharing one column buffer (one GEMM); 0 = automatic (see kTargetColumns).
  int64_t images_per_gemm = 0;
  ParallelMode parallel = ParallelMode::automatic;
  /// Output pixels per column block (one image at a time); 0 = whole images, b of them;
  /// kAutoTile = the backend's choice (see kUnpackedTargetColumns).
  int64_t tile = kAutoTile;
  GemmBackend backend = default_gemm_backend();
  /// The unpacked GEMM's instruction set; empty = the widest this CPU runs.
  std::optional<CpuIsa> isa;
  TapMode taps = TapMode::automatic;
  DataForm bwd_data = DataForm::automatic;
  ColumnForm columns = ColumnForm::automatic;

  /// The knobs cpu.im2col accepts, with these options as their defaults: images_per_gemm
  /// (a positive integer or auto), parallel (auto, images, gemm), tile (a count of output
  /// pixels, 0 or auto for whole images), gemm (the backends this build has), isa (auto or an
  /// instruction set, for gemm=unpacked), taps (auto, all, in_image), bwd_data (auto, col2im,
  /// transposed), columns (auto, buffer, implicit, masked). images_per_gemm, parallel and
  /// gemm may take their default from an environment variable (CONVLAB_IM2COL_IMAGES_PER_GEMM,
  /// CONVLAB_IM2COL_PARALLEL, CONVLAB_IM2COL_GEMM).
  std::vector<KnobSpec> schema() const;
  /// The options that resolved knobs of schema() describe.
  static Im2colOptions from_knobs(const KnobValues& knobs);
};

/// Automatic images per GEMM for the GEMM libraries: the fewest images whose columns reach
/// this many GEMM columns (b = ceil(kTargetColumns / (OH*OW)), at most the images one thread
/// handles); measured with bench/micro/gemm_backend.cpp, see docs/strategy-im2col.md.
inline constexpr int64_t kTargetColumns = 1024;
/// The same for the unpacked GEMM, which keeps its column block in cache instead of packing
/// it: images of more pixels than this are cut into tiles of this many (automatic tile),
/// smaller ones batched up to it (automatic images per GEMM). Measured on ResNet-50's 3x3
/// layers (docs/strategy-im2col.md, "Unpacked against OpenBLAS").
inline constexpr int64_t kUnpackedTargetColumns = 256;

/// Automatic images per GEMM of a tap class: the fewest whose pixels reach this many GEMM
/// columns. A class is narrower than its image (a 7x7 image's edge classes are 5 and 7 pixels
/// wide), and the unpacked GEMM's last column panel of a product runs partly empty, so the
/// classes batch further than whole images do (docs/strategy-im2col.md, "Tap classes"). A
/// worker's images are then cut into the nearest count of even chunks: 16 images of a 7x7
/// interior (25 pixels, 11 reach the target) run as one GEMM of 400 columns, not two of 200,
/// which read the filter twice and end in a half-empty vector (measured faster on the Intel
/// Xeon VM; docs/strategy-im2col.md).
inline constexpr int64_t kClassTargetColumns = 256;

/// Rows of a tap class's column buffer built and multiplied at once (forward and transposed
/// backward-data): one depth block of the unpacked GEMM, so that the block is still in cache
/// when its GEMM reads it, and the buffer holds one block instead of the whole class.
inline constexpr int64_t kClassDepthRows = 256;
/// Input channels per block of a class with `taps` taps: whole channels, at least one.
inline int64_t class_channel_block(int64_t channels, int64_t taps) {
  return std::clamp<int64_t>(kClassDepthRows / std::max<int64_t>(taps, 1), 1,
                             std::max<int64_t>(channels, 1));
}

/// Buffers are padded to 16 floats so that every one starts on a 64-byte line.
inline constexpr int64_t kAlignFloats = 16;

/// What a plan holds and how its workspace is cut (all counts in floats).
///   workspace = 4 bytes * (workers * (col + stage + panel + gemm + index + dw_t)
///                          + (workers - 1) * partial + flipped + ordered)
struct Im2colLayout {
  int threads = 1;                         ///< convlab::num_threads() when planned
  ParallelMode mode = ParallelMode::gemm;  ///< resolved: images or gemm
  /// Slices run in parallel (1 in gemm mode); channels mode: the parts of every class GEMM's
  /// output rows, each worker with its own buffers over every image.
  int64_t workers = 1;
  int gemm_threads = 1;                    ///< the GEMM library's threads: 1 with workers > 1
  int64_t images_per_gemm = 1;             ///< b (1 when tiled)
  /// Output pixels per column block, min(tile, OH*OW); 0 = untiled (whole images, b of them).
  /// Tiled, a GEMM is rows x tile wide and the blocks of one image follow one another.
  int64_t tile = 0;
  bool pointwise = false;  ///< 1x1 / stride 1 / pad 0: no column buffer
  /// Tap classes (taps=in_image, whole images, gemm=unpacked): one GEMM per class over its
  /// taps; col and stage then hold the largest class of b images.
  bool tap_classes = false;
  int64_t class_count = 0;  ///< classes, when tap_classes
  ClassCut class_cut = ClassCut::merged;  ///< tap_class_cut, when tap_classes
  /// Backward-data with stride 1 as the forward convolution of dy by the flipped filter
  /// (strategy/im2col_tap_classes.hpp, transposed_geometry): the column buffer holds dy's
  /// taps (K/g channels), the GEMM's rows and the stage are dx's C/g channels, the filter is
  /// the flipped one (`flipped`, or w read in place under tap classes) and tiles and images
  /// count dx's pixels. Under tap classes they are the forward classes of that
  /// convolution.
  bool transposed = false;
  /// Images per GEMM of each class (tap classes): images_per_gemm when asked for, else enough
  /// for kClassTargetColumns columns; each class runs over a worker's images on its own.
  std::vector<int64_t> class_images;
  double product_share = 1.0;  ///< products multiplied against OH*OW*R*S (tap classes: < 1)
  int64_t col = 0;    ///< pad16(C/g*R*S * width), 0 when pointwise; width = tile or b*OH*OW;
                      ///< tap classes: pad16(max over classes of channels*taps * b*pixels),
                      ///< channels a block (class_channel_block), or C/g for the adjoint
                      ///< backward-data
  int64_t stage = 0;  ///< pad16(K/g * b*OH*OW) if b > 1 (y, dy staged); tap classes:
                      ///< pad16(K/g * the widest class GEMM's columns), for any b
  /// Tap classes: the filter columns of the class being run (int64 indices, two floats each):
  /// pad16(2 * C/g * the most taps of a class). Built per class in run(), so that the plan
  /// holds no index that grows with the filter.
  int64_t index = 0;
  /// Backward-filter under tap classes: one channel block's dW columns, the product of a block
  /// before it is added into dW's scattered columns: pad16(K/g * the most rows of a block).
  int64_t panel = 0;
  /// Backward-filter under tap classes: input channels per block, the same for every class
  /// (class_channel_block of the most taps of a class).
  int64_t filter_block = 0;
  /// Transposed backward-data with every tap: the flipped, transposed filter w'[g][c][k][i'][j']
  /// = w[g][k][c][R-1-i'][S-1-j'], pad16(K*C/g*R*S), one for all workers, after the partials.
  /// The tap classes read it from w in place through their index (flipped_tap_offsets).
  int64_t flipped = 0;
  /// Per extra worker: backward-filter's dW, pad16(K*C/g*R*S); in_channels mode, the
  /// output's, pad16(y elements) or (backward-data) pad16(x elements).
  int64_t partial = 0;
  /// Backward-filter (every tap, gemm=unpacked) where the column buffer has more rows than dY
  /// (C/g*R*S > K/g): the product runs transposed, dW^T[C/g*R*S, K/g] += col * dY^T, so that
  /// the unpacked GEMM transposes dY's blocks into its scratch rather than the larger column
  /// buffer's; each worker sums into its own dW^T (`dw_t`, pad16(K*C/g*R*S)) and transposes it
  /// into its dW at the end. The same products in the same blocks: the bits do not change.
  bool dw_transposed = false;
  int64_t dw_t = 0;
  /// The implicit column buffer (ColumnForm::implicit; forward and transposed backward-data,
  /// stride 1, every tap): `col` holds one image's group padded into `grid`
  /// (padded_grid_elems), the GEMM reads its rows there through `index` (the int64 tap offsets,
  /// pad16(2 * rows)) and writes `stage` (pad16(GEMM rows * tile)), whose output pixels are
  /// copied out; `tile` counts grid columns (the whole grid's when untiled), images go one at a
  /// time.
  bool implicit = false;
  /// Backward-filter's implicit form: `col` holds the chunk's b images padded into `grid`, one
  /// after another (b * padded_grid_elems), and per depth block of its pixels `index` their
  /// offsets there (grid_pixel_offsets, pad16(2 * filter_depth_block(width))) and `stage` dY's
  /// rows of them transposed (pad16(K/g * filter_depth_block(width))); per tap, dW^T's rows of
  /// that tap += the padded images read at the pixels' offsets (C/g rows a grid apart) times
  /// the stage. Tiles and images per GEMM are the column buffer's, and so are the sums'
  /// blocks: the same bits.
  bool pixel_offsets = false;
  PaddedGrid grid;
  /// The masked column buffer (ColumnForm::masked; forward and transposed backward-data): per
  /// image one GEMM reads the input in place and writes the output in place (no col, no
  /// stage); `index` holds the rows' offsets and lane rows (int64, pad16(4 * rows)) and the
  /// taps' lane bits (pad16(ceil(R*S * ceil(OH*OW/16) / 2)), `ordered` the filter's columns in
  /// the masked depth order (flipped for backward-data), pad16(w elements), one for all
  /// workers, after `flipped`. Channel blocks of `masked_block` (class_channel_block).
  bool masked = false;
  int64_t masked_block = 0;
  int64_t ordered = 0;
  /// The GEMM's buffers, per worker (Eigen's packing, the unpacked GEMM's transposed B; empty
  /// for OpenBLAS and oneDNN, which keep their own): planned for the pass's largest GEMM.
  GemmScratch gemm_scratch;
  int64_t gemm = 0;  ///< gemm_scratch.bytes / 4
  std::size_t workspace_bytes = 0;
  GemmBackend backend = default_gemm_backend();
  std::string describe() const;
};

/// Why backward-data of `problem` cannot run in the transposed form with every tap (taps=all),
/// or "" when it can: its column buffer reads dy's padding as zeros, which meet the filter, so
/// the transposed convolution may pad no side more than the problem does (then a NaN or an Inf
/// in w reaches a dx element through a zero only where the forward pass's padding meets it
/// too; an unpadded problem's transposed convolution pads by the dilated kernel).
std::string transposed_all_taps_refusal(const ConvProblem& problem);

/// How the tap classes of a pass on `problem` are cut (strategy/im2col_tap_classes.hpp);
/// `transposed`: the pass is backward-data run as the transposed convolution. Merged, except
/// there, for a problem that pads some side less than the transposed convolution does
/// (transposed_all_taps_refusal): its corners' padding zeros would meet the filter where no
/// zero of the problem's own padding does, so those classes are exact. Elsewhere a merged
/// corner multiplies no zero that taps=all would not.
ClassCut tap_class_cut(const ConvProblem& problem, bool transposed);

/// Why taps=in_image cannot run under `options` (a GEMM backend other than unpacked, a tile),
/// or "" when it can.
std::string tap_classes_refusal(const Im2colOptions& options);

/// The layout of (problem, pass) under `options` with `threads` threads.
Im2colLayout im2col_layout(const ConvProblem& problem, Pass pass, const Im2colOptions& options,
                           int threads);

/// The strategy behind the registry name "cpu.im2col".
class CpuIm2col final : public Algorithm {
 public:
  /// The registry's instance: knob defaults from Im2colOptions{} or their environment
  /// variables.
  CpuIm2col();
  /// An instance whose knobs default to `defaults`, never to the environment (tests and
  /// micro-benchmarks that compare settings side by side).
  explicit CpuIm2col(const Im2colOptions& defaults);
  const AlgorithmInfo& info() const override { return info_; }
  Support supports(const ConvProblem& problem, Pass pass) const override;
  /// The options of a plan made with the default knobs.
  Im2colOptions options() const;
  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override;
  DeviceContext& context() const override;

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override;

 private:
  Support supports_with(const ConvProblem& problem, Pass pass, const Im2colOptions& options) const;
  AlgorithmInfo info_;
};

}  // namespace convlab::im2col
