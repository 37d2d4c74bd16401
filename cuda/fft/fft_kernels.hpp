#pragma once
// Launchers of the cuda.fft kernels (fft_kernels.cu): placing a tensor's planes into the
// real transform planes, reading a result back out of them, and the 1 x 1 transform. The
// placement rules are fft_geometry.hpp's. CUDA-free declarations (cudaStream_t is
// CUstream_st*, cufftComplex is two floats).

#include <cstdint>

#include "strategy/fft_geometry.hpp"

struct CUstream_st;

namespace convlab::cuda {

/// Element e of the staged real planes (Hf x Wf each): the element of src placed at that
/// slot, or 0 (a gather: a slot holds at most one element).
CONVLAB_HD float fft_place_value(const FftPlacement& pl, const float* src, int64_t src_h,
                                 int64_t src_w, int64_t hf, int64_t wf, int64_t e) {
  const int64_t plane = hf * wf;
  const int64_t p = e / plane;
  const int64_t rest = e - p * plane;
  const int64_t sh = rest / wf;
  const int64_t i = fft_element_at(pl.h, sh);
  const int64_t j = fft_element_at(pl.w, rest - sh * wf);
  return (i < 0 || j < 0) ? 0.0f : src[(p * src_h + i) * src_w + j];
}

/// Element e of the cropped tensor (planes of dst_h x dst_w): scale * its slot's value, or 0
/// for an element not placed (x rows/columns that no kept output reaches).
CONVLAB_HD float fft_crop_value(const FftPlacement& pl, const float* staging, int64_t hf,
                                int64_t wf, int64_t dst_h, int64_t dst_w, float scale, int64_t e) {
  const int64_t plane = dst_h * dst_w;
  const int64_t p = e / plane;
  const int64_t rest = e - p * plane;
  const int64_t i = rest / dst_w;
  const int64_t j = rest - i * dst_w;
  if (i >= pl.h.count || j >= pl.w.count) return 0.0f;
  return scale * staging[(p * hf + fft_slot(pl.h, i)) * wf + fft_slot(pl.w, j)];
}

/// staging[p, sh, sw] (planes of Hf x Wf) = src[p, i, j] where (sh, sw) is the slot of
/// element (i, j) under `placement`, else 0; src planes are src_h x src_w.
void launch_place(const FftPlacement& placement, const float* src, int64_t src_h, int64_t src_w,
                  int64_t planes, int64_t hf, int64_t wf, float* staging, CUstream_st* stream);

/// dst[p, i, j] (planes of dst_h x dst_w) = scale * staging[p, slot(i), slot(j)] for the
/// placed elements, 0 for those not placed (x rows/columns no kept output reaches).
void launch_crop(const FftPlacement& placement, const float* staging, int64_t hf, int64_t wf,
                 int64_t planes, int64_t dst_h, int64_t dst_w, float scale, float* dst,
                 CUstream_st* stream);

/// The 1 x 1 transform (Hf = Wf = 1, one bin), which is the identity: spectrum[p] =
/// (staging[p], 0) forward, staging[p] = Re spectrum[p] inverse (cuFFT is not asked for a
/// transform of size 1).
void launch_real_to_spectrum(const float* staging, int64_t planes, float* spectrum,
                             CUstream_st* stream);
void launch_spectrum_to_real(const float* spectrum, int64_t planes, float* staging,
                             CUstream_st* stream);

}  // namespace convlab::cuda
