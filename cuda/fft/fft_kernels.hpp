#pragma once
// Launchers of the cuda.fft kernels (fft_kernels.cu): placing a tensor's planes into the
// real transform planes, reading a result back out of them (or, fused, the C2R's store
// callback's per-element function), transposing spectra, and the 1 x 1 transform. The
// placement rules are fft_geometry.hpp's. CUDA-free declarations (cudaStream_t is
// CUstream_st*, cufftComplex is two floats).

#include <cstdint>

#include "strategy/fast_divmod.hpp"
#include "strategy/fft_geometry.hpp"
#include "strategy/fft_staging.hpp"

struct CUstream_st;

namespace convlab::cuda {

/// The split of a flat index e over planes of rows x cols into (plane, row, column), with
/// the divisors made once per launch on the host (fast_divmod.hpp): no division per element.
struct PlaneSplit {
  FastDivmod plane, row;  ///< by rows * cols, by cols
  static PlaneSplit of(int64_t rows, int64_t cols) {
    return {FastDivmod::make(rows * cols), FastDivmod::make(cols)};
  }
  CONVLAB_HD int64_t split(int64_t e, int64_t* row_index, int64_t* col_index) const {
    int64_t rest = 0;
    const int64_t p = plane.divmod(e, &rest);
    *row_index = row.divmod(rest, col_index);
    return p;
  }
};

/// The placement's steps as divisors, for fft_element_at below.
struct PlacementSteps {
  FastDivmod h, w;
  static PlacementSteps of(const FftPlacement& pl) {
    return {FastDivmod::make(pl.h.step), FastDivmod::make(pl.w.step)};
  }
};

/// fft_geometry.hpp's fft_element_at with the step as a divisor: the element placed at
/// `slot` along the axis, or -1 where the slot holds a zero.
CONVLAB_HD int64_t fft_element_at(const FftAxisPlacement& a, const FastDivmod& step, int64_t slot) {
  const int64_t d = slot - a.offset;
  if (d < 0) return -1;
  int64_t off_grid = 0;
  const int64_t i = step.divmod(d, &off_grid);
  return off_grid == 0 && i < a.count ? i : -1;
}

/// Element e of the staged real planes (`staging` = PlaneSplit::of(Hf, Wf)): the element of
/// src placed at that slot, or 0 (a gather: a slot holds at most one element).
CONVLAB_HD float fft_place_value(const FftPlacement& pl, const PlacementSteps& steps,
                                 const PlaneSplit& staging, const float* src, int64_t src_h,
                                 int64_t src_w, int64_t e) {
  int64_t sh = 0, sw = 0;
  const int64_t p = staging.split(e, &sh, &sw);
  const int64_t i = fft_element_at(pl.h, steps.h, sh);
  const int64_t j = fft_element_at(pl.w, steps.w, sw);
  return (i < 0 || j < 0) ? 0.0f : src[(p * src_h + i) * src_w + j];
}

/// One input of a fused placement: its placement (with the steps as divisors) and its planes
/// of src_h x src_w as stored.
struct StagedInput {
  FftPlacement placement;
  PlacementSteps steps;
  const float* src = nullptr;
  int64_t src_h = 0, src_w = 0, planes = 0;
  static StagedInput of(const FftPlacement& pl, const float* src, int64_t src_h, int64_t src_w,
                        int64_t planes) {
    return {pl, PlacementSteps::of(pl), src, src_h, src_w, planes};
  }
};

/// Float e of a fused gather over both inputs' regions (fft_staging.hpp): *value is what the
/// separate placement of that input writes at the same place of its region; false for the
/// alignment gap, where nothing is written. `staging` = PlaneSplit::of(Hf, Wf) serves both
/// regions, as each starts at a plane of its own.
CONVLAB_HD bool fft_place_pair_value(const StagedInput& a, const StagedInput& b, int64_t a_floats,
                                     int64_t b_offset, const PlaneSplit& staging, int64_t e,
                                     float* value) {
  int64_t local = 0;
  const int region = fft_staging_region(a_floats, b_offset, e, &local);
  if (region < 0) return false;
  const StagedInput& in = region == 0 ? a : b;
  *value = fft_place_value(in.placement, in.steps, staging, in.src, in.src_h, in.src_w, local);
  return true;
}

/// Whether element (i, j) of a tensor's plane has a slot: the x rows/columns that no kept
/// output reaches have none, and a pass that writes x gives them zeros.
CONVLAB_HD bool fft_crop_placed(const FftPlacement& pl, int64_t i, int64_t j) {
  return i < pl.h.count && j < pl.w.count;
}

/// Element e of the cropped tensor (`dst` = PlaneSplit::of(dst_h, dst_w)): scale * its
/// slot's value in the Hf x Wf staging planes, or 0 for an element not placed.
CONVLAB_HD float fft_crop_value(const FftPlacement& pl, const PlaneSplit& dst, const float* staging,
                                int64_t hf, int64_t wf, float scale, int64_t e) {
  int64_t i = 0, j = 0;
  const int64_t p = dst.split(e, &i, &j);
  if (!fft_crop_placed(pl, i, j)) return 0.0f;
  return scale * staging[(p * hf + fft_slot(pl.h, i)) * wf + fft_slot(pl.w, j)];
}

/// The fused crop (fft_options.hpp): where the C2R's store callback writes. Trivially
/// copyable; a run writes it into the staging header (fft_geometry.hpp), where the callback,
/// handed only the staging pointer, finds it.
struct FftCropTarget {
  FftPlacement placement;
  PlacementSteps steps;
  PlaneSplit staging;  ///< PlaneSplit::of(Hf, Wf): a C2R output offset into (plane, slots)
  float* dst = nullptr;
  int64_t dst_h = 0, dst_w = 0;
  float scale = 1.0f;
  static FftCropTarget of(const FftPlacement& pl, int64_t hf, int64_t wf, float* dst, int64_t dst_h,
                          int64_t dst_w, float scale) {
    return {pl, PlacementSteps::of(pl), PlaneSplit::of(hf, wf), dst, dst_h, dst_w, scale};
  }
};

/// Bytes of the staging header: the fused crop's target, rounded up to the workspace's
/// alignment.
constexpr int64_t kFftCropHeaderBytes = 256;
static_assert(sizeof(FftCropTarget) <= kFftCropHeaderBytes, "the crop target outgrew its header");

/// The fused crop's store of `value`, the C2R's result at float `offset` of its real output
/// (plane q, slot row, slot column at q*Hf*Wf + row*Wf + column, as cufft_layout lays the real
/// side out for every rank): scale * value into dst where the slot holds a placed element,
/// nothing elsewhere. A slot holds at most one element and each placed element has one slot,
/// so the C2R writes every placed element of dst once: the separate crop's value, to the bit
/// when the C2R's value is the same.
CONVLAB_HD void fft_crop_store(const FftCropTarget& t, int64_t offset, float value) {
  int64_t sh = 0, sw = 0;
  const int64_t q = t.staging.split(offset, &sh, &sw);
  const int64_t i = fft_element_at(t.placement.h, t.steps.h, sh);
  const int64_t j = fft_element_at(t.placement.w, t.steps.w, sw);
  if (i >= 0 && j >= 0) t.dst[(q * t.dst_h + i) * t.dst_w + j] = t.scale * value;
}

/// The body of the cuFFT store callback: the target is read from the staging header, the
/// kFftCropHeaderBytes just before `data_out` (the staging pointer the C2R was given).
CONVLAB_HD void fft_crop_store_at(void* data_out, unsigned long long offset, float value) {
  const auto* target = reinterpret_cast<const FftCropTarget*>(
      static_cast<const unsigned char*>(data_out) - kFftCropHeaderBytes);
  fft_crop_store(*target, static_cast<int64_t>(offset), value);
}

/// Element e of the fused crop's tensor (`dst` = PlaneSplit::of(dst_h, dst_w)) when it is not
/// placed: its zero, written before the C2R (which stores only the placed ones).
CONVLAB_HD void fft_crop_zero_unplaced(const FftCropTarget& t, const PlaneSplit& dst, int64_t e) {
  int64_t i = 0, j = 0;
  dst.split(e, &i, &j);
  if (!fft_crop_placed(t.placement, i, j)) t.dst[e] = 0.0f;
}

/// Complex element e of the transpose (cols x rows, row-major) of a row-major rows x cols
/// complex matrix: the index of its source element (`rows` the divisor of e).
CONVLAB_HD int64_t complex_transpose_source(const FastDivmod& rows, int64_t cols, int64_t e) {
  int64_t r = 0;
  const int64_t c = rows.divmod(e, &r);
  return r * cols + c;
}

/// staging[p, sh, sw] (planes of Hf x Wf) = src[p, i, j] where (sh, sw) is the slot of
/// element (i, j) under `placement`, else 0; src planes are src_h x src_w.
void launch_place(const FftPlacement& placement, const float* src, int64_t src_h, int64_t src_w,
                  int64_t planes, int64_t hf, int64_t wf, float* staging, CUstream_st* stream);

/// Both inputs placed by one launch: staging[0, a) as launch_place places `a`,
/// staging[layout.b_offset, layout.covered()) as it places `b`.
void launch_place_pair(const StagedInput& a, const StagedInput& b, const FftStagingLayout& layout,
                       int64_t hf, int64_t wf, float* staging, CUstream_st* stream);

/// dst[p, i, j] (planes of dst_h x dst_w) = scale * staging[p, slot(i), slot(j)] for the
/// placed elements, 0 for those not placed (x rows/columns no kept output reaches).
void launch_crop(const FftPlacement& placement, const float* staging, int64_t hf, int64_t wf,
                 int64_t planes, int64_t dst_h, int64_t dst_w, float scale, float* dst,
                 CUstream_st* stream);

/// The fused crop's work before its C2R: `target` into the staging header at `header`, and
/// the zeros of dst's elements that are not placed (a launch over dst only where some are).
void launch_crop_prepare(const FftCropTarget& target, int64_t planes, void* header,
                         CUstream_st* stream);

/// The fused crop of the 1 x 1 transform (rank 0, no cuFFT call): fft_crop_store of
/// Re spectrum[p] at offset p, for every plane p.
void launch_spectrum_to_cropped(const float* spectrum, int64_t planes, const FftCropTarget& target,
                                CUstream_st* stream);

/// dst (cols x rows complex, row-major) = the transpose of src (rows x cols): plane-major
/// spectra to frequency-major (rows = planes, cols = bins) or back (rows = bins).
void launch_transpose_complex(const float* src, int64_t rows, int64_t cols, float* dst,
                              CUstream_st* stream);

/// The 1 x 1 transform (Hf = Wf = 1, one bin), which is the identity: spectrum[p] =
/// (staging[p], 0) forward, staging[p] = Re spectrum[p] inverse (cuFFT is not asked for a
/// transform of size 1).
void launch_real_to_spectrum(const float* staging, int64_t planes, float* spectrum,
                             CUstream_st* stream);
void launch_spectrum_to_real(const float* spectrum, int64_t planes, float* staging,
                             CUstream_st* stream);

}  // namespace convlab::cuda
