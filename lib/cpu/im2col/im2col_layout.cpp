// cpu.im2col's settings and the workspace layout of a plan (the formula at the top of
// cpu_im2col.cpp and in docs/strategy-im2col.md).
#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <sstream>
#include <string>

#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "cpu_im2col.hpp"
#include "strategy/im2col_index.hpp"
#include "strategy/im2col_masked_columns.hpp"
#include "strategy/im2col_tap_classes.hpp"

namespace convlab::im2col {

constexpr auto kParallelModeNames = enum_names<ParallelMode::in_channels>({
    {ParallelMode::automatic, "auto"},
    {ParallelMode::images, "images"},
    {ParallelMode::gemm, "gemm"},
    {ParallelMode::channels, "channels"},
    {ParallelMode::in_channels, "in_channels"},
});

const char* to_string(ParallelMode mode) noexcept { return name_of(kParallelModeNames, mode); }

constexpr auto kTapModeNames = enum_names<TapMode::in_image>({
    {TapMode::automatic, "auto"},
    {TapMode::all, "all"},
    {TapMode::in_image, "in_image"},
});

const char* to_string(TapMode mode) noexcept { return name_of(kTapModeNames, mode); }

constexpr auto kDataFormNames = enum_names<DataForm::transposed>({
    {DataForm::automatic, "auto"},
    {DataForm::col2im, "col2im"},
    {DataForm::transposed, "transposed"},
});

const char* to_string(DataForm form) noexcept { return name_of(kDataFormNames, form); }

constexpr auto kColumnFormNames = enum_names<ColumnForm::masked>({
    {ColumnForm::automatic, "auto"},
    {ColumnForm::buffer, "buffer"},
    {ColumnForm::implicit, "implicit"},
    {ColumnForm::masked, "masked"},
});

const char* to_string(ColumnForm form) noexcept { return name_of(kColumnFormNames, form); }

std::vector<KnobSpec> Im2colOptions::schema() const {
  std::vector<std::string> backends;
  for (GemmBackend b :
       {GemmBackend::openblas, GemmBackend::eigen, GemmBackend::onednn, GemmBackend::unpacked}) {
    if (gemm_backend_available(b)) backends.push_back(to_string(b));
  }
  return {
      integer_knob("images_per_gemm",
                   images_per_gemm > 0 ? std::to_string(images_per_gemm) : "auto", 1, INT_MAX,
                   /*allow_auto=*/true, "CONVLAB_IM2COL_IMAGES_PER_GEMM",
                   "images sharing one column buffer and GEMM; auto reaches 1024 GEMM columns"),
      choice_knob("parallel", to_string(parallel),
                  {"auto", "images", "gemm", "channels", "in_channels"}, "CONVLAB_IM2COL_PARALLEL",
                  "threads over (image, group) slices, inside the GEMM, over each tap class "
                  "GEMM's output channels or (forward, stride-1 backward-data) input channels "
                  "(tap classes only; channels also splits backward-filter's implicit GEMMs by "
                  "input channels), or auto: in_channels or channels where they pay, else "
                  "images or gemm by balance"),
      integer_knob("tile", tile == kAutoTile ? "auto" : std::to_string(tile), 0, INT_MAX,
                   /*allow_auto=*/true, "",
                   "output pixels per column block (buffer C/g*R*S x tile); 0: whole images; "
                   "auto: 256 for gemm=unpacked on larger images, else whole images"),
      choice_knob("gemm", to_string(backend), backends, "CONVLAB_IM2COL_GEMM",
                  "GEMM library, or unpacked (own kernels); onednn allocates packing buffers "
                  "outside the workspace"),
      choice_knob("isa", isa ? to_string(*isa) : "auto", cpu_isa_choices(), "",
                  "instruction set of the unpacked GEMM's kernels (gemm=unpacked)"),
      choice_knob("taps", to_string(taps), {"auto", "all", "in_image"}, "",
                  "all: every tap, padding as zeros; in_image: per class of output pixels, a "
                  "GEMM over the taps that read inside the image (gemm=unpacked, whole "
                  "images); auto: in_image where that skips >= 5 % of the products"),
      choice_knob("bwd_data", to_string(bwd_data), {"auto", "col2im", "transposed"}, "",
                  "backward-data as W^T dY and col2im, or (stride 1) as dy convolved with the "
                  "flipped filter; auto: transposed under tap classes, and with every tap "
                  "where it pads no side more than the problem and K/g <= C/g or its buffer "
                  "is read in place (columns masked or implicit, C/g >= 32), else col2im"),
      choice_knob(
          "columns", to_string(columns), {"auto", "buffer", "implicit", "masked"}, "",
          "buffer: im2col copies the taps into a column buffer; implicit (gemm=unpacked, "
          "every tap; forward and transposed backward-data with stride 1, "
          "backward-filter): each image padded once and the GEMM reads the buffer "
          "there; masked (gemm=unpacked, every tap; forward and transposed "
          "backward-data with stride 1 and OW = W): the GEMM reads the buffer in the "
          "input itself, the padding's lanes masked, and writes the output in place; "
          "auto: forward and backward-data on tiled images masked where it applies "
          "and the isa is avx512 on an AMD CPU, else implicit where its extra columns (<= 15 %) "
          "add <= 32 products per column-buffer element and the buffer has >= 2 rows "
          "per output row, "
          "backward-filter implicit where the padded images are smaller than the "
          "buffer and C/g >= 32"),
  };
}

Im2colOptions Im2colOptions::from_knobs(const KnobValues& knobs) {
  Im2colOptions options;
  options.images_per_gemm = knob_integer(knobs, "images_per_gemm").value_or(0);
  options.tile = knob_integer(knobs, "tile").value_or(kAutoTile);
  if (auto parallel = find_value(kParallelModeNames, knob_text(knobs, "parallel"))) {
    options.parallel = *parallel;
  }
  if (auto backend = find_value(kGemmBackendNames, knob_text(knobs, "gemm"))) {
    options.backend = *backend;
  }
  const std::string& isa = knob_text(knobs, "isa");
  if (isa != "auto") options.isa = cpu_isa(isa, "cpu.im2col.isa");
  if (auto taps = find_value(kTapModeNames, knob_text(knobs, "taps"))) options.taps = *taps;
  if (auto form = find_value(kDataFormNames, knob_text(knobs, "bwd_data"))) {
    options.bwd_data = *form;
  }
  if (auto form = find_value(kColumnFormNames, knob_text(knobs, "columns"))) {
    options.columns = *form;
  }
  return options;
}

namespace {

int64_t pad16(int64_t floats) {
  return checked_mul((checked_add(floats, kAlignFloats - 1, "im2col workspace") / kAlignFloats),
                     kAlignFloats, "im2col workspace");
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#ifdef _OPENMP
constexpr bool kHaveOpenMP = true;
#else
constexpr bool kHaveOpenMP = false;
#endif

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100.0 * share);
  return text;
}

// "30 rows of 29, 1 column shared": the grid's rows, its pitch and the padding columns
// neighbouring rows share.
std::string grid_size(const PaddedGrid& grid) {
  return std::to_string(grid.height) + " rows of " + std::to_string(grid.width) +
         (grid.shared > 0 ? ", " + std::to_string(grid.shared) + " column" +
                                (grid.shared == 1 ? "" : "s") + " shared"
                          : std::string());
}

}  // namespace

std::string tap_classes_refusal(const Im2colOptions& options) {
  if (options.backend != GemmBackend::unpacked) {
    return std::string("gemm=") + to_string(options.backend) +
           " cannot read the filter's columns through an index; only gemm=unpacked can";
  }
  if (options.tile > 0) {
    return "tile=" + std::to_string(options.tile) +
           " cuts images into blocks; the classes take whole images (tile 0 or auto)";
  }
  return "";
}

std::string transposed_all_taps_refusal(const ConvProblem& p) {
  const int64_t reach_h = p.dilation_h * (p.r - 1), reach_w = p.dilation_w * (p.s - 1);
  if (reach_h - p.pad_h <= p.pad_h && reach_h - p.end_pad_h() <= p.end_pad_h() &&
      reach_w - p.pad_w <= p.pad_w && reach_w - p.end_pad_w() <= p.end_pad_w()) {
    return "";
  }
  return "the transposed convolution pads dy by " + std::to_string(reach_h - p.pad_h) + "/" +
         std::to_string(reach_h - p.end_pad_h()) + " rows and " +
         std::to_string(reach_w - p.pad_w) + "/" + std::to_string(reach_w - p.end_pad_w()) +
         " columns, more than the problem's " + std::to_string(p.pad_h) + "/" +
         std::to_string(p.end_pad_h()) + " and " + std::to_string(p.pad_w) + "/" +
         std::to_string(p.end_pad_w()) +
         ": with every tap those zeros meet the filter, and a NaN or Inf in w would reach dx "
         "elements none of its products reach (taps=in_image runs it exactly)";
}

ClassCut tap_class_cut(const ConvProblem& p, bool transposed) {
  return transposed && !transposed_all_taps_refusal(p).empty() ? ClassCut::exact
                                                               : ClassCut::merged;
}

std::string Im2colLayout::describe() const {
  std::ostringstream out;
  out << "parallel " << to_string(mode) << " (" << workers << " worker" << (workers == 1 ? "" : "s")
      << ", " << threads << " thread" << (threads == 1 ? "" : "s") << ", gemm " << gemm_threads
      << "), ";
  if (tap_classes) {
    out << "images per GEMM by class";
    for (std::size_t k = 0; k < class_images.size(); ++k)
      out << (k ? ", " : " ") << class_images[k];
  } else {
    out << images_per_gemm << " image" << (images_per_gemm == 1 ? "" : "s") << " per GEMM";
  }
  const bool grid_columns = implicit && !pixel_offsets;
  out << (tile > 0 ? ", tile " + std::to_string(tile) + (grid_columns ? " grid columns" : " pixels")
                   : std::string())
      << (grid_columns ? ", columns implicit (padded image " + grid_size(grid) + ", " +
                             std::to_string(grid.columns) + " grid columns)"
          : implicit ? ", columns implicit by pixel offsets (padded images " + grid_size(grid) + ")"
          : masked   ? ", columns masked (channel blocks of " + std::to_string(masked_block) +
                         ", filter reordered " + std::to_string(ordered) + ")"
                   : std::string())
      << (pointwise ? ", 1x1 shortcut" : "")
      << (tap_classes ? ", taps in_image (" + std::to_string(class_count) + " classes, " +
                            percent(product_share) + " of the products)"
                      : std::string())
      << ", workspace " << workspace_bytes << " B (col " << col << ", stage " << stage
      << (panel > 0 ? ", panel " + std::to_string(panel) : std::string()) << ", gemm scratch "
      << gemm
      << (tap_classes || implicit || masked ? ", tap index " + std::to_string(index)
                                            : std::string())
      << ", partial " << partial
      << (dw_transposed ? ", dW transposed " + std::to_string(dw_t) : std::string())
      << " floats), gemm " << to_string(backend)
      << (backend == GemmBackend::unpacked ? std::string(" ") + to_string(gemm_scratch.isa)
                                           : std::string());
  return out.str();
}

namespace {

// Whether columns=auto takes the implicit form that reads the column buffer's rows as runs of
// the padded image (forward, the transposed backward-data; stride 1) for a GEMM of
// `gemm_rows` output rows over `conv`, cut into tiles of `tile` pixels (0: untiled).
bool implicit_rows_pay(const Im2colGeometry& conv, int64_t gemm_rows, int64_t tile) {
  // Per element of the column buffer it does not copy, the implicit form multiplies extra
  // share x GEMM rows more products; and it copies the GEMM's rows out of the stage where the
  // buffer copied the column rows in. Untiled images run tap classes or batch images, which
  // a grid of one image cannot.
  const double extra = grid_extra_share(conv, padded_grid(conv));
  return tile > 0 && extra <= kImplicitMaxExtraShare &&
         extra * static_cast<double>(gemm_rows) <= kImplicitMaxExtraProducts &&
         col_rows(conv) >= kImplicitMinRowsPerOutputRow * gemm_rows;
}

// Whether columns=auto takes the masked form (where it runs) for a GEMM of `gemm_rows` output
// rows over `conv`, cut into tiles of `tile` pixels (0: untiled): no copy of the input or the
// output and no extra columns, so none of the implicit form's limits on them; on tiled images
// only, as the implicit form (smaller ones run tap classes or batch images), and not where
// the GEMM's depth is short against its rows (kMaskedMinRowsPerOutputRow); and only where
// `by_default` (masked_columns_by_default: the GEMM's build masks its loads natively, on the
// CPUs where that was measured to pay). On the AMD EPYC
// (Zen 1, AVX2) VM, ResNet-50's 56x56 and 28x28 layers, AlexNet's conv2 and VGG-16's conv2_1
// and conv4_2 ran their forward and backward-data passes in 1.2-1.4x the time masked, with
// the plain loads and cleared lanes, as implicit (2.3-2.6x with vmaskmovps on ResNet-50's);
// docs/strategy-im2col.md, "Masked columns".
bool masked_rows_pay(const Im2colGeometry& conv, int64_t gemm_rows, int64_t tile, bool by_default) {
  return by_default && tile > 0 && has_masked_columns(conv) &&
         col_rows(conv) >= kMaskedMinRowsPerOutputRow * gemm_rows;
}

}  // namespace

bool masked_columns_by_default(CpuIsa isa) {
  return cpu_gemm::unpacked_sgemm_native_lane_loads(isa) && cpu_vendor() == CpuVendor::amd;
}

Im2colLayout im2col_layout(const ConvProblem& p, Pass pass, const Im2colOptions& options,
                           int threads) {
  const Im2colGeometry g = make_im2col_geometry(p, 1);
  Im2colLayout layout;
  layout.backend = options.backend;
  layout.threads = threads < 1 ? 1 : threads;
  layout.pointwise = is_pointwise(g);
  const int64_t pairs = p.groups * p.n;
  const CpuIsa isa = options.isa ? *options.isa : cpu_isa("auto", "cpu.im2col.isa");
  const bool masked_by_default =
      options.backend == GemmBackend::unpacked && masked_columns_by_default(isa);

  // GEMM columns per block: a library packs its operands and runs best on wide products
  // (kTargetColumns); the unpacked GEMM reads its column block as it lies, so it keeps the
  // block small enough to stay in cache, tiling large images (kUnpackedTargetColumns).
  const int64_t target =
      options.backend == GemmBackend::unpacked ? kUnpackedTargetColumns : kTargetColumns;
  auto tile_for = [&](int64_t pixels) {
    if (options.tile != kAutoTile) return options.tile;
    return options.backend == GemmBackend::unpacked && pixels > target ? target : int64_t{0};
  };
  int64_t tile = tile_for(col_pixels(g));

  // Backward-data with stride 1 may run as the forward convolution of dy by the filter
  // flipped into the workspace (dy its input, dx its output): no col2im, and each dx element
  // one dot product. A strided one has no such form.
  const bool stride_1 = p.stride_h == 1 && p.stride_w == 1;
  if (pass == Pass::backward_data && options.bwd_data == DataForm::transposed && !stride_1) {
    throw Error(ErrorCode::unsupported,
                "cpu.im2col bwd_data=transposed on " + p.descriptor() + ": stride " +
                    std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) +
                    "; only a stride-1 backward-data is a forward convolution of dy");
  }
  const bool transposed =
      pass == Pass::backward_data && stride_1 && options.bwd_data != DataForm::col2im;
  // Tap classes: asked for (and then every condition must hold), or automatic where they run
  // whole images anyway and skip enough of the products to pay for their extra copies. The
  // transposed form runs the forward classes of the transposed convolution (tap_class_cut); a
  // strided backward-data (or bwd_data=col2im) the adjoint of the forward classes.
  const Im2colGeometry class_geometry = transposed ? transposed_geometry(p) : g;
  const ClassCut cut = tap_class_cut(p, transposed);
  const std::vector<TapClass> classes = tap_classes(class_geometry, cut);
  // Against the products of the full column buffer, which taps=all multiplies in every pass.
  const double share = static_cast<double>(tap_class_products(classes)) /
                       static_cast<double>(col_pixels(class_geometry) * p.r * p.s);
  if (options.taps == TapMode::in_image) {
    const std::string refusal = tap_classes_refusal(options);
    if (!refusal.empty()) {
      throw Error(ErrorCode::unsupported, "cpu.im2col taps=in_image on " + p.descriptor() + " " +
                                              to_string(pass) + ": " + refusal);
    }
    layout.tap_classes = true;
  } else if (options.taps == TapMode::automatic) {
    layout.tap_classes =
        tap_classes_refusal(options).empty() && tile == 0 &&
        options.columns != ColumnForm::implicit && options.columns != ColumnForm::masked &&
        share <=
            1.0 - (pass == Pass::backward_filter ? kTapClassMinSavingFilter : kTapClassMinSaving) &&
        static_cast<int64_t>(classes.size()) <= kTapClassMaxAuto;
  }
  if (layout.tap_classes) {
    tile = 0;
    layout.pointwise = false;
    layout.class_count = static_cast<int64_t>(classes.size());
    layout.class_cut = cut;
    layout.product_share = share;
    layout.transposed = transposed;
  } else if (transposed && !layout.pointwise) {
    // Every tap: the transposed convolution's padding zeros meet the filter. Its column
    // buffer holds K/g*R*S rows where col2im's holds C/g*R*S, for the same products: auto
    // takes it where that buffer is no larger, or where the implicit or masked form will read
    // it in place (below) and the GEMM has C/g rows enough.
    const std::string refusal = transposed_all_taps_refusal(p);
    const int64_t transposed_tile = tile_for(col_pixels(class_geometry));
    const bool read_in_place =
        options.backend == GemmBackend::unpacked && p.c_per_group() >= kImplicitMinChannels &&
        (options.columns == ColumnForm::implicit || options.columns == ColumnForm::masked ||
         (options.columns == ColumnForm::automatic && has_padded_grid(class_geometry) &&
          (masked_rows_pay(class_geometry, p.c_per_group(), transposed_tile, masked_by_default) ||
           implicit_rows_pay(class_geometry, p.c_per_group(), transposed_tile))));
    if (refusal.empty() && (options.bwd_data == DataForm::transposed ||
                            p.k_per_group() <= p.c_per_group() || read_in_place)) {
      layout.transposed = true;
      tile = transposed_tile;
    } else if (!refusal.empty() && options.bwd_data == DataForm::transposed) {
      throw Error(ErrorCode::unsupported, "cpu.im2col bwd_data=transposed taps=all on " +
                                              p.descriptor() + ": " + refusal);
    }
  }
  // The convolution the GEMMs run: the problem's, or the transposed one; its output pixels
  // are the GEMM's columns.
  const Im2colGeometry& conv = layout.transposed ? class_geometry : g;
  const int64_t pixels = col_pixels(conv);
  // The implicit column buffer: the forward convolution's GEMM (forward, or the transposed
  // backward-data) reads its rows in a padded image instead of im2col's copy.
  const std::string implicit_refusal = [&]() -> std::string {
    if (options.backend != GemmBackend::unpacked) {
      return std::string("gemm=") + to_string(options.backend) +
             " cannot read B's rows through an index; only gemm=unpacked can";
    }
    if (layout.pointwise) return "a 1x1 unpadded convolution's GEMM reads x in place already";
    if (layout.tap_classes) return "the tap classes (taps=in_image) build their own buffers";
    // Backward-filter reads the column buffer's columns through their offsets, at any stride.
    if (pass == Pass::backward_filter) return "";
    if (pass == Pass::backward_data && !layout.transposed) {
      return "backward-data by col2im (bwd_data=col2im, or a stride other than 1) writes the "
             "column buffer rather than reading it";
    }
    if (!has_padded_grid(conv)) {
      return "stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) +
             ": a strided convolution's neighbouring outputs do not read neighbouring inputs";
    }
    return "";
  }();
  const bool filter_implicit = pass == Pass::backward_filter && implicit_refusal.empty();
  const PaddedGrid grid =
      has_padded_grid(conv) || filter_implicit ? padded_grid(conv) : PaddedGrid{};
  // The masked column buffer: that GEMM reads its rows in the input itself, unpadded, with
  // the lanes in the padding masked off, and writes the output in place.
  const std::string masked_refusal = [&]() -> std::string {
    if (pass == Pass::backward_filter) {
      return "backward-filter's GEMM sums over the output pixels, reading the column buffer's "
             "columns rather than its rows (columns=implicit reads them in padded images)";
    }
    if (!implicit_refusal.empty()) return implicit_refusal;
    if (options.tile > 0) {
      return "tile=" + std::to_string(options.tile) +
             ": the masked form runs one GEMM over each image, which blocks its columns itself";
    }
    if (!has_masked_columns(conv)) {
      return "output rows of " + std::to_string(conv.out_w) + " over input rows of " +
             std::to_string(conv.in_w) +
             ": the masked form numbers the output pixels as the input's, which needs OW = W";
    }
    return "";
  }();
  if (options.columns == ColumnForm::masked) {
    if (!masked_refusal.empty()) {
      throw Error(ErrorCode::unsupported, "cpu.im2col columns=masked on " + p.descriptor() + " " +
                                              to_string(pass) + ": " + masked_refusal);
    }
    layout.masked = true;
  } else if (options.columns == ColumnForm::implicit) {
    if (!implicit_refusal.empty()) {
      throw Error(ErrorCode::unsupported, "cpu.im2col columns=implicit on " + p.descriptor() +
                                              " " + to_string(pass) + ": " + implicit_refusal);
    }
    layout.implicit = true;
  } else if (options.columns == ColumnForm::automatic && filter_implicit) {
    // Backward-filter's implicit form multiplies no extra products: it pays where the padded
    // images are smaller than the column buffer they replace and its per-tap GEMMs have rows
    // enough (kImplicitMinChannels).
    layout.implicit = padded_grid_elems(conv, grid) < col_rows(conv) * pixels &&
                      conv.channels >= kImplicitMinChannels;
  } else if (options.columns == ColumnForm::automatic) {
    const int64_t gemm_rows = layout.transposed ? p.c_per_group() : p.k_per_group();
    layout.masked =
        masked_refusal.empty() && masked_rows_pay(conv, gemm_rows, tile, masked_by_default);
    layout.implicit =
        !layout.masked && implicit_refusal.empty() && implicit_rows_pay(conv, gemm_rows, tile);
  }
  if (layout.implicit) {
    layout.grid = grid;
    layout.pixel_offsets = pass == Pass::backward_filter;
  }
  if (options.parallel == ParallelMode::channels && !layout.tap_classes && !layout.pixel_offsets) {
    throw Error(ErrorCode::unsupported,
                "cpu.im2col parallel=channels on " + p.descriptor() + " " + to_string(pass) +
                    ": it splits the tap classes' GEMMs or backward-filter's implicit ones, and "
                    "this plan runs neither (taps=all, a tile, or taps=auto where they would "
                    "skip under 5 % of the products, with the column buffer)");
  }

  // Threads. Under tap classes, each class GEMM's output channels (channels mode) or, in
  // forward and the transposed backward-data, its input channels (in_channels mode) where that
  // pays (below). Otherwise slices in parallel when the pairs split within 25% of evenly (an
  // uneven split idles threads for the longest slice), else the GEMM's own threads. Images and
  // the channels modes need OpenMP; without it the build falls back to gemm mode.
  //
  // A channels worker copies every column block itself, which costs more than it saves in
  // forward and backward-data unless images mode would run most of the products in class
  // GEMMs narrower than the classes' target (kChannelsMinShortShare). Backward-filter's
  // workers besides sum disjoint rows of dW: no partial dW per worker to add, and the adds of
  // its classes' products into dW's columns split between them. Each part needs a fair share
  // of rows.
  bool channels_pay = false;
  if (layout.tap_classes && layout.threads > 1) {
    const int64_t out_rows = layout.transposed ? p.c_per_group() : p.k_per_group();
    const int64_t worker_images = std::min(p.n, ceil_div(pairs, layout.threads));
    int64_t short_products = 0;
    for (const TapClass& c : classes) {
      if (class_pixels(c) * worker_images < kClassTargetColumns) {
        short_products += class_pixels(c) * class_taps(c);
      }
    }
    channels_pay = out_rows >= kChannelPartMinRows * layout.threads &&
                   (pass == Pass::backward_filter ||
                    static_cast<double>(short_products) >=
                        kChannelsMinShortShare *
                            static_cast<double>(tap_class_products(classes)));
  }
  // Backward-filter's implicit form split by input channels: each worker pads its channels of
  // every image and sums its own rows of dW^T (a share of it the size of the whole divided by
  // the threads), where images mode gives each worker a whole dW^T and each extra one a partial
  // dW to add after (kFilterChannelsMinChannels).
  if (layout.pixel_offsets && layout.threads > 1) {
    channels_pay = conv.channels >= kFilterChannelsMinChannels * layout.threads;
  }
  // The input channels' split sums the class GEMMs of forward and the transposed
  // backward-data into one output per worker; backward-filter's class GEMMs sum over pixels,
  // and the adjoint backward-data's rows are the input channels already (channels mode).
  const bool depth_splits = layout.tap_classes && (pass == Pass::forward || transposed);
  if (options.parallel == ParallelMode::in_channels && !depth_splits) {
    throw Error(ErrorCode::unsupported,
                "cpu.im2col parallel=in_channels on " + p.descriptor() + " " + to_string(pass) +
                    ": it splits the input channels of the tap classes' forward GEMMs, and this "
                    "plan runs " +
                    (!layout.tap_classes ? std::string("none (taps=all, a tile, or taps=auto "
                                                       "where they would skip under 5 % of the "
                                                       "products)")
                     : pass == Pass::backward_filter
                         ? std::string("backward-filter's, which sum over pixels "
                                       "(parallel=channels splits its dW rows)")
                         : std::string("the adjoint backward-data's (a stride other than 1, or "
                                       "bwd_data=col2im), whose rows are the input channels "
                                       "already (parallel=channels)")));
  }
  // In channels mode every worker copies every column block; split by input channels, each
  // copies its own, at the cost of a partial output per extra worker and their sum: the
  // copies saved grow with the GEMM's input channels, the output's traffic with its rows
  // (kInChannelsMinChannels).
  const int64_t gemm_out_rows = transposed ? p.c_per_group() : p.k_per_group();
  const bool in_channels_pay =
      channels_pay && depth_splits && class_geometry.channels >= gemm_out_rows &&
      class_geometry.channels >= kInChannelsMinChannels * layout.threads;
  bool images = false, channels = false, in_channels = false;
  if (layout.threads > 1 && kHaveOpenMP) {
    if (options.parallel == ParallelMode::in_channels ||
        (options.parallel == ParallelMode::automatic && in_channels_pay)) {
      in_channels = true;
    } else if (options.parallel == ParallelMode::channels ||
               (options.parallel == ParallelMode::automatic && channels_pay)) {
      channels = true;
    } else if (pairs > 1 && options.parallel == ParallelMode::images) {
      images = true;
    } else if (pairs > 1 && options.parallel == ParallelMode::automatic) {
      const int64_t longest = ceil_div(pairs, layout.threads);
      images = pairs >= layout.threads && longest * layout.threads * 4 <= pairs * 5;
    }
  }
  layout.workers = images                   ? std::min<int64_t>(layout.threads, pairs)
                   : channels || in_channels ? layout.threads
                                             : 1;
  layout.mode = channels      ? ParallelMode::channels
                : in_channels ? ParallelMode::in_channels
                : images      ? ParallelMode::images
                              : ParallelMode::gemm;
  // Our threads times the GEMM's never exceed T: T slices or T channel parts with one-thread
  // GEMMs, or one slice whose GEMM takes all T (T defaults to the CPUs this process may run
  // on).
  layout.gemm_threads = layout.workers > 1 ? 1 : layout.threads;

  // Images per GEMM: asked for, or enough to reach the target columns; never more than a
  // worker's pairs, the batch, or 32-bit GEMM columns.
  int64_t b = options.images_per_gemm > 0 ? options.images_per_gemm : ceil_div(target, pixels);
  // A worker's images: its slice's, or (channels modes) every image.
  const int64_t longest =
      std::min(p.n, channels || in_channels ? pairs : ceil_div(pairs, layout.workers));
  b = std::min({b, longest, int64_t{INT_MAX} / pixels});
  // A tile blocks one image's columns, so it takes the images one at a time; the 1x1 shortcut
  // reads x in place and has no column buffer to block.
  // Forward's implicit form (the GEMM's columns are grid columns) too; backward-filter's
  // blocks the images' pixels as the column buffer does.
  const bool tiled = (tile > 0 && !layout.pointwise) ||
                     (layout.implicit && !layout.pixel_offsets) || layout.masked;
  if (b < 1 || layout.pointwise || tiled) b = 1;
  // As many GEMMs as b gives, but of even width (8 images with b = 6: 4 + 4, not 6 + 2).
  b = ceil_div(longest, ceil_div(longest, b));
  layout.images_per_gemm = b;
  layout.tile = tiled ? std::min(tile, pixels) : 0;
  // The implicit form's blocks count grid columns; untiled, the whole grid is one block.
  if (layout.implicit && !layout.pixel_offsets) {
    layout.tile = tile > 0 ? std::min(tile, grid.columns) : grid.columns;
  }
  // The masked form's GEMM spans its image: the GEMM blocks its columns itself.
  if (layout.masked) layout.tile = 0;

  // The widest GEMM's columns: a tile, or b images.
  const int64_t cols = layout.masked ? pixels
                       : tiled       ? layout.tile
                                     : checked_mul(b, pixels, "im2col columns");
  // The GEMM's output rows: y's K/g channels, or (transposed) dx's C/g.
  const int64_t out_rows = layout.transposed ? p.c_per_group() : p.k_per_group();
  layout.col = layout.pointwise ? 0 : pad16(checked_mul(col_rows(conv), cols, "im2col col"));
  layout.stage = b > 1 ? pad16(checked_mul(out_rows, cols, "im2col stage")) : 0;
  if (layout.pixel_offsets) {
    // The chunk's images padded, one depth block of dY transposed (the GEMM's B), and the
    // offsets of that block's pixels in the padded images.
    // Channels mode: each worker pads and sums only its share of the input channels.
    Im2colGeometry mine = conv;
    mine.channels = channels ? largest_channel_part(conv.channels, layout.workers) : conv.channels;
    layout.col = pad16(checked_mul(b, padded_grid_elems(mine, grid), "im2col padded images"));
    layout.stage = pad16(checked_mul(p.k_per_group(), filter_depth_block(cols), "im2col stage"));
    layout.index = pad16(2 * filter_depth_block(cols));
  } else if (layout.implicit) {
    // One image's group padded, a block's product before its output pixels are copied out,
    // and the rows' offsets in the padded image.
    layout.col = pad16(checked_mul(conv.channels, grid.plane, "im2col padded image"));
    layout.stage = pad16(checked_mul(out_rows, cols, "im2col stage"));
    layout.index = pad16(checked_mul(2, col_rows(conv), "im2col tap offsets"));
  } else if (layout.masked) {
    // The rows' offsets in the input and lane rows, and the taps' lane bits (two to a float).
    layout.col = 0;
    layout.stage = 0;
    layout.masked_block = class_channel_block(conv.channels, p.r * p.s);
    const int64_t bits = checked_mul(p.r * p.s, masked_lane_words(conv), "im2col lane bits");
    layout.index = checked_add(pad16(checked_mul(4, col_rows(conv), "im2col tap offsets")),
                               pad16((bits + 1) / 2), "im2col tap offsets");
  }
  std::array<int64_t, 3> class_filter_gemm{};  // m, n, k of backward-filter's class GEMMs
  if (layout.tap_classes) {
    int64_t most_taps = 0;
    for (const TapClass& c : classes) most_taps = std::max(most_taps, class_taps(c));
    // Backward-filter runs every class over one block of channels at a time, so its block
    // is one for all classes.
    const bool filter = pass == Pass::backward_filter;
    if (filter) layout.filter_block = class_channel_block(class_geometry.channels, most_taps);
    int64_t col = 0, widest = 0, block_rows = 0, staged_pixels = 0;
    for (const TapClass& c : classes) {
      const int64_t pixels_c = std::max<int64_t>(1, class_pixels(c));
      // Backward-filter's class GEMMs run over the pixels (their inner dimension): one chunk
      // of all the worker's images adds each class into dW once.
      int64_t bc = options.images_per_gemm > 0 ? options.images_per_gemm
                   : filter                    ? longest
                                               : ceil_div(kClassTargetColumns, pixels_c);
      bc = std::clamp<int64_t>(bc, 1, std::min(longest, int64_t{INT_MAX} / pixels_c));
      // Chunks of even size: a requested count is an upper bound; the automatic one takes the
      // nearest count of chunks (kClassTargetColumns), so a chunk may reach 1.5 times the
      // target rather than fall to half of it.
      const int64_t chunks = options.images_per_gemm > 0 || filter
                                 ? ceil_div(longest, bc)
                                 : std::max<int64_t>(1, (2 * longest + bc) / (2 * bc));
      bc = ceil_div(longest, chunks);
      layout.class_images.push_back(bc);
      const int64_t width = checked_mul(bc, class_pixels(c), "im2col columns");
      // The column buffer is built a block of channels at a time, except by the adjoint
      // backward-data, which writes the whole class's from its GEMM.
      const bool adjoint = pass == Pass::backward_data && !transposed;
      const int64_t channels_c =
          adjoint  ? class_geometry.channels
          : filter ? layout.filter_block
                   : class_channel_block(class_geometry.channels, class_taps(c));
      // Where the GEMM reads it as B, its rows start whole lines (class_row_pitch).
      const int64_t pitch = adjoint || filter ? width : class_row_pitch(width);
      col = std::max(col, checked_mul(channels_c * class_taps(c), pitch, "im2col col"));
      block_rows = std::max(block_rows, channels_c * class_taps(c));
      widest = std::max(widest, width);
      staged_pixels += class_pixels(c);
    }
    layout.col = pad16(col);
    if (filter) {
      // Backward-filter stages a run's dY class by class (K/g rows by every class's pixels of
      // the worker's images: dY's size); per block, its GEMM puts dW's K/g rows by the block's
      // columns into the panel, over a class chunk's pixels (its transposed B, the column
      // block, through the GEMM's scratch).
      layout.stage = pad16(checked_mul(checked_mul(p.k_per_group(), staged_pixels, "im2col stage"),
                                       longest, "im2col stage"));
      layout.panel = pad16(checked_mul(p.k_per_group(), block_rows, "im2col panel"));
      class_filter_gemm = {p.k_per_group(), block_rows, widest};
    } else {
      // The stage holds a class's output pixels.
      layout.stage = pad16(checked_mul(out_rows, widest, "im2col stage"));
    }
    // The filter's columns of a class, which the GEMM reads A through; backward-filter adds
    // its products into them by runs instead (add_class_filter_columns).
    if (!filter) {
      layout.index =
          pad16(checked_mul(2 * class_geometry.channels, most_taps, "im2col tap index"));
    }
  }
  // The tap classes read the flipped filter from w in place (flipped_tap_offsets); every tap
  // runs a GEMM of any backend, which needs it as a matrix.
  // The masked form reads its own copy, the filter's columns in its depth order.
  if (layout.transposed && !layout.tap_classes && !layout.masked) {
    layout.flipped = pad16(p.w_elems());
  }
  if (layout.masked) layout.ordered = pad16(p.w_elems());
  // The extra workers' sums: backward-filter's dW (images mode), or the whole output split by
  // input channels.
  layout.partial = layout.workers == 1 ? 0
                   : in_channels       ? pad16(pass == Pass::forward ? p.y_elems() : p.x_elems())
                   : pass == Pass::backward_filter && !channels ? pad16(p.w_elems())
                                                                : 0;
  // The unpacked GEMM transposes B, the operand summed along its rows, block by block: dY's
  // blocks where they are smaller than the column buffer's (the 3x3 layers: 9 C/g against
  // K/g rows). Transposed, C (dW^T) is swept once per depth block of the product rather than
  // once per product, so only products of one depth block run so (a tile, or b images of at
  // most kUnpackedSgemmDepth pixels): on ResNet-50's 14x14 layer (2 images, 392 pixels)
  // transposed ran slower.
  const int64_t kg = p.k_per_group(), rows = col_rows(g);
  layout.dw_transposed = layout.pixel_offsets ||
                         (pass == Pass::backward_filter && !layout.tap_classes &&
                          layout.backend == GemmBackend::unpacked && rows > kg &&
                          cols <= cpu_gemm::kUnpackedSgemmDepth);
  if (layout.dw_transposed) {
    // Channels mode: a worker's rows of every group's dW^T, (its channels * R*S) x K/g.
    layout.dw_t = channels ? pad16(checked_mul(p.groups * p.k_per_group() * p.r * p.s,
                                               largest_channel_part(g.channels, layout.workers),
                                               "im2col dW transposed"))
                           : pad16(p.w_elems());
  }
  // The pass's GEMM at its widest (a tile, or b images), as run() issues it (m x n x k), on the
  // GEMM's threads (one per worker among several).
  switch (pass) {
    case Pass::forward:
      layout.gemm_scratch =
          plan_gemm_scratch(layout.backend, false, kg, cols, rows, layout.gemm_threads, isa);
      break;
    case Pass::backward_data:
      layout.gemm_scratch =
          layout.transposed ? plan_gemm_scratch(layout.backend, false, out_rows, cols,
                                                col_rows(conv), layout.gemm_threads, isa)
                            : plan_gemm_scratch(layout.backend, false, rows, cols, kg,
                                                layout.gemm_threads, isa);
      break;
    case Pass::backward_filter:
      layout.gemm_scratch =
          layout.tap_classes
              ? plan_gemm_scratch(layout.backend, true, class_filter_gemm[0], class_filter_gemm[1],
                                  class_filter_gemm[2], layout.gemm_threads, isa)
          : layout.pixel_offsets
              ? plan_gemm_scratch(layout.backend, false, g.channels, kg, filter_depth_block(cols),
                                  layout.gemm_threads, isa)
          : layout.dw_transposed
              ? plan_gemm_scratch(layout.backend, true, rows, kg, cols, layout.gemm_threads, isa)
              : plan_gemm_scratch(layout.backend, true, kg, rows, cols, layout.gemm_threads, isa);
      break;
  }
  layout.gemm = static_cast<int64_t>(layout.gemm_scratch.bytes / sizeof(float));
  int64_t per_worker = 0;
  for (int64_t buffer : {layout.col, layout.stage, layout.panel, layout.gemm, layout.index,
                         layout.dw_t}) {
    per_worker = checked_add(per_worker, buffer, "im2col workspace");
  }
  const int64_t floats = checked_add(
      checked_add(checked_mul(layout.workers, per_worker, "im2col workspace"),
                  checked_mul(layout.workers - 1, layout.partial, "im2col workspace"),
                  "im2col workspace"),
      checked_add(layout.flipped, layout.ordered, "im2col workspace"), "im2col workspace");
  layout.workspace_bytes =
      static_cast<std::size_t>(checked_mul(floats, int64_t{sizeof(float)}, "im2col workspace"));
  return layout;
}

}  // namespace convlab::im2col
