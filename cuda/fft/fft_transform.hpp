#pragma once
// The cuFFT transform that realises fft_geometry.hpp's Hf x Wf plane: its rank and sizes
// and how many bins the per-bin products run over. CUDA-free, host-tested.
//   Hf > 1, Wf > 1: rank 2 {Hf, Wf}, the geometry's B = Hf*(Wf/2 + 1) bins
//   Hf = 1:         rank 1 {Wf}, Wf/2 + 1 bins (= B)
//   Wf = 1:         rank 1 {Hf}, Hf/2 + 1 bins: B = Hf, but bins above Hf/2 are conjugates
//                   of those below (real data), which C2R never reads
//   Hf = Wf = 1:    rank 0, the identity on one bin (no cuFFT call)
// With frequency-major spectra, bin b of plane p at b*planes + p, the first bins of the
// geometry's buffers are used in every case.

#include <cstdint>
#include <string>

#include "strategy/fft_geometry.hpp"

namespace convlab::cuda {

struct FftTransform {
  int rank = 2;
  int64_t n[2] = {1, 1};   ///< transform sizes, outermost first (cuFFT's order)
  int64_t real_plane = 1;  ///< Hf*Wf: floats from one real plane to the next
  int64_t bins = 1;        ///< bins the per-bin products run over
  std::string describe() const {
    if (rank == 0) return "1x1 identity transform";
    std::string s = "cuFFT rank " + std::to_string(rank) + " {" + std::to_string(n[0]);
    if (rank == 2) s += ", " + std::to_string(n[1]);
    return s + "}";
  }
};

inline FftTransform fft_transform(const FftGeometry& g) {
  FftTransform t;
  const int64_t hf = g.h.size, wf = g.w.size;
  t.real_plane = hf * wf;
  if (hf > 1 && wf > 1) {
    t.rank = 2, t.n[0] = hf, t.n[1] = wf, t.bins = g.bins;
  } else if (hf > 1 || wf > 1) {
    t.rank = 1, t.n[0] = hf > 1 ? hf : wf, t.bins = t.n[0] / 2 + 1;
  } else {
    t.rank = 0, t.bins = 1;
  }
  return t;
}

/// The advanced data layout of one batched cuFFT transform between real planes (Hf*Wf floats
/// apart) and spectra, as cufftMakePlanMany64 takes it: element (batch q, position i0[, i1])
/// of the input at q*idist + (i0[*inembed[1] + i1])*istride, likewise the output. The
/// spectra are frequency-major (bin b of plane p at b*planes + p: the strided layout, which
/// the per-bin products read directly) or, when `contiguous`, plane-major with each plane's
/// t.bins bins one after another (p*bins + b: the transform reads and writes unit stride,
/// and a transpose moves the spectra to or from the frequency-major layout).
struct CufftLayout {
  int rank = 0;         ///< 0: the identity on one bin, no cuFFT plan
  bool forward = true;  ///< R2C (real planes -> spectra) or C2R
  long long n[2] = {1, 1}, inembed[2] = {1, 1}, onembed[2] = {1, 1};
  long long istride = 1, idist = 1, ostride = 1, odist = 1, batch = 1;
};

inline CufftLayout cufft_layout(const FftTransform& t, int64_t planes, bool forward,
                                bool contiguous = false) {
  CufftLayout l;
  l.rank = t.rank;
  l.forward = forward;
  l.batch = planes;
  long long real[2] = {1, 1}, half[2] = {1, 1};
  for (int d = 0; d < t.rank; ++d) l.n[d] = real[d] = half[d] = t.n[d];
  if (t.rank > 0) half[t.rank - 1] = t.n[t.rank - 1] / 2 + 1;
  for (int d = 0; d < 2; ++d) {
    l.inembed[d] = forward ? real[d] : half[d];
    l.onembed[d] = forward ? half[d] : real[d];
  }
  // Real side: planes one after another; complex side: frequency-major, or plane-major
  // (a half plane of a rank-2 transform, Hf*(Wf/2 + 1), or Hf/2 + 1 or Wf/2 + 1 for rank 1,
  // is exactly t.bins bins).
  const long long complex_stride = contiguous ? 1 : planes;
  const long long complex_dist = contiguous ? t.bins : 1;
  l.istride = forward ? 1 : complex_stride;
  l.idist = forward ? t.real_plane : complex_dist;
  l.ostride = forward ? complex_stride : 1;
  l.odist = forward ? complex_dist : t.real_plane;
  return l;
}

}  // namespace convlab::cuda
