#pragma once
// The executor choices of cuda.fft that its knobs select, and their parsers. CUDA-free.
//
//   crop=separate      C2R into the staging planes, then a crop kernel reads the kept slots
//                      back, scales them by 1/(Hf*Wf) and writes the output tensor
//   crop=fused         the C2R itself writes the output tensor: a cuFFT store callback
//                      (fft_crop_callback.cu, linked into cuFFT's kernel at plan time)
//                      keeps each value that lands on a kept slot, scaled, and drops the
//                      rest, so the staging planes are neither written nor read back
//   layout=strided     cuFFT reads and writes the spectra frequency-major through its
//                      complex-side stride (stride = planes, distance 1)
//   layout=contiguous  cuFFT reads and writes each plane's spectrum contiguously (stride 1,
//                      distance = bins) in a plane-major buffer, and a transpose kernel
//                      moves it to (from) the frequency-major layout of the per-bin products

#include <string>
#include <utility>

#include "convlab/knobs.hpp"
#include "strategy/fft_staging.hpp"

namespace convlab::cuda {

enum class FftCrop { separate, fused };
enum class FftBatchLayout { strided, contiguous };

inline const char* to_string(FftCrop c) { return c == FftCrop::fused ? "fused" : "separate"; }
inline const char* to_string(FftBatchLayout l) {
  return l == FftBatchLayout::contiguous ? "contiguous" : "strided";
}

/// Parses the crop knob's value; Error{invalid_argument} names anything else.
inline FftCrop fft_crop_from(const std::string& text) {
  static constexpr std::pair<const char*, FftCrop> kChoices[] = {{"separate", FftCrop::separate},
                                                                 {"fused", FftCrop::fused}};
  return knob_choice("FFT crop", text, kChoices);
}

/// Parses the layout knob's value; Error{invalid_argument} names anything else.
inline FftBatchLayout fft_batch_layout_from(const std::string& text) {
  static constexpr std::pair<const char*, FftBatchLayout> kChoices[] = {
      {"strided", FftBatchLayout::strided}, {"contiguous", FftBatchLayout::contiguous}};
  return knob_choice("FFT layout", text, kChoices);
}

/// Everything the knobs of cuda.fft decide about a plan (the GPU settings aside).
struct CudaFftOptions {
  bool cache_filters = false;
  FftStaging staging = FftStaging::fused;
  bool graph = false;
  FftCrop crop = FftCrop::separate;
  FftBatchLayout layout = FftBatchLayout::strided;
};

}  // namespace convlab::cuda
