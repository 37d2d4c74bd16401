#pragma once
// Where a frequency-domain pass stages its two inputs in the real Hf x Wf planes before the
// forward transforms (fft_geometry.hpp places them; this file decides where they lie).
//
//   separate: one input at a time at the start of the staging buffer: place A, transform A,
//             place B, transform B. The staging holds the largest tensor's planes.
//   fused:    both inputs side by side, A from float 0 and B from `b_offset`, placed by ONE
//             gather over both regions (one launch instead of two); the two transforms then
//             read their own region. The staging holds A's planes, B's planes and the
//             alignment gap between them, or the output's planes if that is more.
//
// B's region starts on an `alignment`-byte boundary because a transform library reads it
// as an array of its own (cuFFT wants its input aligned to the element type at least; 256
// bytes keeps B's loads coalesced like A's). The floats between A's end and b_offset are
// written by nobody and read by nobody. The output's inverse transform and crop use the
// staging from float 0 in both modes. CUDA-free, CONVLAB_HD where kernels call it.

#include <cstdint>
#include <string>
#include <utility>

#include "convlab/error.hpp"
#include "convlab/knobs.hpp"
#include "strategy/fft_geometry.hpp"

namespace convlab {

enum class FftStaging { fused, separate };

inline const char* to_string(FftStaging s) { return s == FftStaging::fused ? "fused" : "separate"; }

/// Parses a knob value ("fused" or "separate"); Error{invalid_argument} names anything else.
inline FftStaging fft_staging_from(const std::string& text) {
  static constexpr std::pair<const char*, FftStaging> kChoices[] = {
      {"fused", FftStaging::fused}, {"separate", FftStaging::separate}};
  return knob_choice("FFT staging", text, kChoices);
}

/// The inputs' regions in the staging buffer (floats from its start).
struct FftStagingLayout {
  FftStaging mode = FftStaging::fused;
  int64_t a_floats = 0;        ///< A's planes * Hf*Wf, from float 0
  int64_t b_offset = 0;        ///< where B's region starts (0 when separate)
  int64_t b_floats = 0;        ///< B's planes * Hf*Wf
  int64_t staging_planes = 0;  ///< Hf x Wf planes the staging buffer must hold
  /// Floats one fused gather covers: [0, a_floats) is A, [b_offset, covered) is B.
  int64_t covered() const { return b_offset + b_floats; }
};

/// The staging layout of `g`'s inputs under `mode` with `alignment`-byte aligned regions (a
/// power of two, at least 4). The geometry's own staging is ignored: this decides the
/// staging_planes to ask fft_geometry for (FftGeometryOptions::staging_planes).
inline FftStagingLayout fft_staging_layout(const FftGeometry& g, FftStaging mode,
                                           int64_t alignment = 256) {
  if (alignment < 4 || (alignment & (alignment - 1)) != 0) {
    throw Error(ErrorCode::invalid_argument, "fft_staging_layout: alignment " +
                                                 std::to_string(alignment) +
                                                 " is not a power of two >= 4");
  }
  const int64_t plane = checked_mul(g.h.size, g.w.size, "FFT plane");
  FftStagingLayout l;
  l.mode = mode;
  l.a_floats = checked_mul(fft_planes(g, g.input_a), plane, "staging of input A");
  l.b_floats = checked_mul(fft_planes(g, g.input_b), plane, "staging of input B");
  const int64_t out_planes = fft_planes(g, g.output);
  if (mode == FftStaging::separate) {
    l.b_offset = 0;
    int64_t largest = fft_planes(g, g.input_a) > fft_planes(g, g.input_b)
                          ? fft_planes(g, g.input_a)
                          : fft_planes(g, g.input_b);
    l.staging_planes = largest > out_planes ? largest : out_planes;
    return l;
  }
  const int64_t step = alignment / 4;  // floats
  l.b_offset = checked_add(l.a_floats, step - 1, "staging of input B") / step * step;
  const int64_t floats = checked_add(l.b_offset, l.b_floats, "fused staging");
  const int64_t planes = (floats + plane - 1) / plane;
  l.staging_planes = planes > out_planes ? planes : out_planes;
  return l;
}

/// Which region float e of a fused gather belongs to: 0 for A (*local = e), 1 for B (*local
/// = e - b_offset), -1 for the alignment gap (nothing to write). No division.
CONVLAB_HD int fft_staging_region(int64_t a_floats, int64_t b_offset, int64_t e, int64_t* local) {
  if (e < a_floats) {
    *local = e;
    return 0;
  }
  if (e < b_offset) {
    *local = 0;
    return -1;
  }
  *local = e - b_offset;
  return 1;
}

}  // namespace convlab
