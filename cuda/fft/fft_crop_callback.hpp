#pragma once
// The fused crop's cuFFT store callback (fft_crop_callback.cu) as LTO-IR in a fatbin, made
// and embedded by the build (cuda/CMakeLists.txt), and the name cuFFT links it by.

#include <cstddef>

namespace convlab::cuda {

extern const unsigned char kFftCropCallbackLto[];
extern const std::size_t kFftCropCallbackLto_size;

/// The callback's symbol (extern "C" in fft_crop_callback.cu).
constexpr const char* kFftCropCallbackSymbol = "convlab_fft_crop_store";

}  // namespace convlab::cuda
