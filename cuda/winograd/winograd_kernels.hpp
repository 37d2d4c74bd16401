#pragma once
// The kernels of cuda.winograd around its cuBLAS GEMMs: the filter, input and output
// transforms of forward and backward-data, and the gradient transform and filter adjoint of
// backward-filter. One thread transforms one whole tile (or one filter) with the shared
// CONVLAB_HD tile transforms of strategy/winograd_transform.hpp; the per-thread functions
// below are CONVLAB_HD too, so the host tests run exactly what the kernels run. Buffers are
// laid out as cpu.winograd's (strategy/winograd_geometry.hpp; the chunk is the leading
// dimension of V, M and P): consecutive threads take consecutive tiles of one channel, so
// their stores to V and P are contiguous. No atomics: every output has one writer.
// CUDA-free declarations.

#include <cstdint>

#include "strategy/winograd_geometry.hpp"
#include "strategy/winograd_transform.hpp"

struct CUstream_st;

namespace convlab::cuda {

/// U[xi][d][s] = (G w G^T)[xi] for the filter of destination channel d and source channel
/// s of group g (rows = dst_channels * src_channels, row = d * src_channels + s): w[k = d,
/// c = s] for forward, rot180(w[k = s, c = d]) for backward-data (`flip`).
template <int M>
CONVLAB_HD void winograd_filter_row(const winograd::WinogradLayout& l, bool flip, int64_t g,
                                    const float* w, int64_t row, float* u) {
  constexpr int kPoints = winograd::Tile<M>::points;
  const int64_t src = l.src_channels, rows = l.dst_channels * src;
  const int64_t d = row / src, s = row % src;
  const int64_t kg = flip ? l.src_channels : l.dst_channels;
  const int64_t cg = flip ? l.dst_channels : l.src_channels;
  const int64_t k = flip ? s : d, c = flip ? d : s;
  const float* wk = w + ((g * kg + k) * cg + c) * 9;
  float tap[9], out[kPoints];
  for (int i = 0; i < 9; ++i) tap[i] = flip ? wk[8 - i] : wk[i];
  winograd::filter_transform<M>(tap, out);
  for (int xi = 0; xi < kPoints; ++xi) u[xi * rows + row] = out[xi];
}

/// V[xi][c][t] = (B^T d B)[xi] for job = c * count + t: the source patch of tile t0 + t of
/// group g, zero outside the source image.
template <int M>
CONVLAB_HD void winograd_input_tile(const winograd::WinogradLayout& l, int64_t g, const float* src,
                                    int64_t t0, int64_t count, int64_t job, float* v) {
  constexpr int kAlpha = winograd::Tile<M>::alpha, kPoints = winograd::Tile<M>::points;
  const int64_t c = job / count, t = job % count;
  int64_t n = 0, th = 0, tw = 0;
  winograd::winograd_locate(l, t0 + t, &n, &th, &tw);
  const float* s = src + (n * l.src_total + g * l.src_channels + c) * l.src_h * l.src_w;
  const int64_t h0 = th * M - l.offset_h, w0 = tw * M - l.offset_w;
  float d[kPoints], out[kPoints];
  for (int i = 0; i < kAlpha; ++i) {
    const int64_t h = h0 + i;
    for (int j = 0; j < kAlpha; ++j) {
      const int64_t x = w0 + j;
      d[i * kAlpha + j] =
          h >= 0 && h < l.src_h && x >= 0 && x < l.src_w ? s[h * l.src_w + x] : 0.0f;
    }
  }
  winograd::input_transform<M>(d, out);
  for (int xi = 0; xi < kPoints; ++xi) v[(xi * l.src_channels + c) * l.chunk + t] = out[xi];
}

/// The destination tile t0 + t of channel k (job = k * count + t) of group g: A^T M A, the
/// part inside the destination image written.
template <int M>
CONVLAB_HD void winograd_output_tile(const winograd::WinogradLayout& l, int64_t g,
                                     const float* prod, int64_t t0, int64_t count, int64_t job,
                                     float* dst) {
  constexpr int kPoints = winograd::Tile<M>::points;
  const int64_t k = job / count, t = job % count;
  float pts[kPoints], out[M * M];
  for (int xi = 0; xi < kPoints; ++xi) pts[xi] = prod[(xi * l.dst_channels + k) * l.chunk + t];
  winograd::output_transform<M>(pts, out);
  int64_t n = 0, th = 0, tw = 0;
  winograd::winograd_locate(l, t0 + t, &n, &th, &tw);
  float* o = dst + (n * l.dst_total + g * l.dst_channels + k) * l.dst_h * l.dst_w;
  for (int i = 0; i < M; ++i) {
    const int64_t h = th * M + i;
    for (int j = 0; j < M; ++j) {
      const int64_t x = tw * M + j;
      if (h < l.dst_h && x < l.dst_w) o[h * l.dst_w + x] = out[i * M + j];
    }
  }
}

/// P[xi][k][t] = (A dY A^T)[xi] for job = k * count + t: the m x m tile t0 + t of dy (channel
/// k of group g), zero past its edge (backward-filter).
template <int M>
CONVLAB_HD void winograd_gradient_tile(const winograd::WinogradLayout& l, int64_t g,
                                       const float* dy, int64_t t0, int64_t count, int64_t job,
                                       float* prod) {
  constexpr int kPoints = winograd::Tile<M>::points;
  const int64_t k = job / count, t = job % count;
  int64_t n = 0, th = 0, tw = 0;
  winograd::winograd_locate(l, t0 + t, &n, &th, &tw);
  const float* s = dy + (n * l.dst_total + g * l.dst_channels + k) * l.dst_h * l.dst_w;
  float tile[M * M], out[kPoints];
  for (int i = 0; i < M; ++i) {
    const int64_t h = th * M + i;
    for (int j = 0; j < M; ++j) {
      const int64_t x = tw * M + j;
      tile[i * M + j] = h < l.dst_h && x < l.dst_w ? s[h * l.dst_w + x] : 0.0f;
    }
  }
  winograd::output_adjoint<M>(tile, out);
  for (int xi = 0; xi < kPoints; ++xi) prod[(xi * l.dst_channels + k) * l.chunk + t] = out[xi];
}

/// dw[k, c] = G^T dU[.][k][c] G for kc = k * C/g + c of group g (backward-filter).
template <int M>
CONVLAB_HD void winograd_filter_gradient(const winograd::WinogradLayout& l, int64_t g,
                                         const float* du, int64_t kc, float* dw) {
  constexpr int kPoints = winograd::Tile<M>::points;
  const int64_t rows = l.dst_channels * l.src_channels;
  float pts[kPoints];
  for (int xi = 0; xi < kPoints; ++xi) pts[xi] = du[xi * rows + kc];
  winograd::filter_adjoint<M>(pts, dw + (g * rows + kc) * 9);
}

// Launches on `stream`, one thread per filter, tile or filter gradient (grid-stride).
void launch_winograd_filter(const winograd::WinogradLayout& l, bool flip, int64_t g, const float* w,
                            float* u, CUstream_st* stream);
void launch_winograd_input(const winograd::WinogradLayout& l, int64_t g, const float* src,
                           int64_t t0, int64_t count, float* v, CUstream_st* stream);
void launch_winograd_output(const winograd::WinogradLayout& l, int64_t g, const float* prod,
                            int64_t t0, int64_t count, float* dst, CUstream_st* stream);
void launch_winograd_gradient(const winograd::WinogradLayout& l, int64_t g, const float* dy,
                              int64_t t0, int64_t count, float* prod, CUstream_st* stream);
void launch_winograd_filter_gradient(const winograd::WinogradLayout& l, int64_t g, const float* du,
                                     float* dw, CUstream_st* stream);

}  // namespace convlab::cuda
