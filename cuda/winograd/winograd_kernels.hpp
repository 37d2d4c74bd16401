#pragma once
// The kernels of cuda.winograd around its cuBLAS GEMMs: the filter, input and output
// transforms of forward and backward-data, and the gradient transform and filter adjoint of
// backward-filter. One thread transforms one whole tile (or one filter) with the shared
// CONVLAB_HD tile transforms of strategy/winograd_transform.hpp; the per-thread functions
// below are CONVLAB_HD too, so the host tests run exactly what the kernels run. Buffers are
// laid out as cpu.winograd's (strategy/winograd_geometry.hpp: transform point xi's matrix a
// point stride after point xi - 1's, the chunk the leading dimension of V, M and P):
// consecutive threads take consecutive tiles of one channel, so their stores to V and P are
// contiguous. No atomics: every output has one writer.
// CUDA-free declarations.

#include <cstdint>

#include "strategy/winograd_geometry.hpp"
#include "strategy/winograd_transform.hpp"

struct CUstream_st;

namespace convlab::cuda {

/// The n x n block of a plane (height x width, row-major) whose top-left element is (h0, w0),
/// zero outside the plane.
template <int N>
CONVLAB_HD void winograd_gather(const float* plane, int64_t height, int64_t width, int64_t h0,
                                int64_t w0, float* block) {
  for (int i = 0; i < N; ++i) {
    const int64_t h = h0 + i;
    for (int j = 0; j < N; ++j) {
      const int64_t x = w0 + j;
      block[i * N + j] = h >= 0 && h < height && x >= 0 && x < width ? plane[h * width + x] : 0.0f;
    }
  }
}

/// Job = channel * count + slot of a chunk's tiles [t0, t0 + count) of group g: the channel
/// within the group, the slot, the tile's row and column, and where its image's plane of that
/// channel starts in the source tensor (`source`) or the destination one.
struct WinogradJob {
  int64_t channel = 0, slot = 0, th = 0, tw = 0, plane = 0;
};
CONVLAB_HD WinogradJob winograd_job(const winograd::WinogradLayout& l, int64_t g, bool source,
                                    int64_t t0, int64_t count, int64_t job) {
  WinogradJob j;
  j.channel = job / count;
  j.slot = job % count;
  int64_t n = 0;
  winograd::winograd_locate(l, t0 + j.slot, &n, &j.th, &j.tw);
  const int64_t total = source ? l.src_total : l.dst_total;
  const int64_t group = source ? l.src_channels : l.dst_channels;
  const int64_t plane = source ? l.src_h * l.src_w : l.dst_h * l.dst_w;
  j.plane = (n * total + g * group + j.channel) * plane;
  return j;
}

/// Where transform point xi of a job's tile lies in V, M or P: point xi's matrix starts
/// `point` floats (the buffer's point stride: l.input_point or l.product_point) after point
/// xi - 1's, the channel is its row and the slot the fastest index.
CONVLAB_HD int64_t winograd_point(const winograd::WinogradLayout& l, int64_t point, int xi,
                                  const WinogradJob& j) {
  return xi * point + j.channel * l.chunk + j.slot;
}

/// U[xi][d][s] = (G w G^T)[xi] for the filter of destination channel d and source channel
/// s of group g (rows = dst_channels * src_channels, row = d * src_channels + s): w[k = d,
/// c = s] for forward, rot180(w[k = s, c = d]) for backward-data (`flip`).
template <int M>
CONVLAB_HD void winograd_filter_row(const winograd::WinogradLayout& l, bool flip, int64_t g,
                                    const float* w, int64_t row, float* u) {
  constexpr int kPoints = winograd::Tile<M>::points;
  const int64_t src = l.src_channels;
  const int64_t d = row / src, s = row % src;
  const int64_t kg = flip ? l.src_channels : l.dst_channels;
  const int64_t cg = flip ? l.dst_channels : l.src_channels;
  const int64_t k = flip ? s : d, c = flip ? d : s;
  const float* wk = w + ((g * kg + k) * cg + c) * 9;
  float tap[9], out[kPoints];
  for (int i = 0; i < 9; ++i) tap[i] = flip ? wk[8 - i] : wk[i];
  winograd::filter_transform<M>(tap, out);
  for (int xi = 0; xi < kPoints; ++xi) u[xi * l.filter_point + row] = out[xi];
}

/// The two transforms that take an image patch to Winograd points: the input transform of a
/// source patch (forward, backward-data) and the adjoint of the output transform of a dy tile
/// (backward-filter).
enum class PatchTransform { input, output_adjoint };

/// Gathers the patch of `plane` (h x w) at (top, left), zero outside the image, applies the
/// transform and writes its points to `points` in layout `point`: the shared body of the
/// input and gradient tiles, which differ only in the patch size and the transform.
template <int M, PatchTransform T>
CONVLAB_HD void winograd_patch_to_points(const winograd::WinogradLayout& l, const WinogradJob& j,
                                         const float* plane, int64_t h, int64_t w, int64_t top,
                                         int64_t left, int64_t point, float* points) {
  constexpr int kSide = T == PatchTransform::input ? winograd::Tile<M>::alpha : M;
  constexpr int kPoints = winograd::Tile<M>::points;
  float patch[kSide * kSide], out[kPoints];
  winograd_gather<kSide>(plane, h, w, top, left, patch);
  if constexpr (T == PatchTransform::input) {
    winograd::input_transform<M>(patch, out);
  } else {
    winograd::output_adjoint<M>(patch, out);
  }
  for (int xi = 0; xi < kPoints; ++xi) points[winograd_point(l, point, xi, j)] = out[xi];
}

/// V[xi][c][t] = (B^T d B)[xi] for job = c * count + t: the source patch of tile t0 + t of
/// group g, zero outside the source image.
template <int M>
CONVLAB_HD void winograd_input_tile(const winograd::WinogradLayout& l, int64_t g, const float* src,
                                    int64_t t0, int64_t count, int64_t job, float* v) {
  const WinogradJob j = winograd_job(l, g, /*source=*/true, t0, count, job);
  winograd_patch_to_points<M, PatchTransform::input>(l, j, src + j.plane, l.src_h, l.src_w,
                                                     j.th * M - l.offset_h, j.tw * M - l.offset_w,
                                                     l.input_point, v);
}

/// The destination tile t0 + t of channel k (job = k * count + t) of group g: A^T M A, the
/// part inside the destination image written.
template <int M>
CONVLAB_HD void winograd_output_tile(const winograd::WinogradLayout& l, int64_t g,
                                     const float* prod, int64_t t0, int64_t count, int64_t job,
                                     float* dst) {
  constexpr int kPoints = winograd::Tile<M>::points;
  const WinogradJob j = winograd_job(l, g, /*source=*/false, t0, count, job);
  float pts[kPoints], out[M * M];
  for (int xi = 0; xi < kPoints; ++xi) pts[xi] = prod[winograd_point(l, l.product_point, xi, j)];
  winograd::output_transform<M>(pts, out);
  float* o = dst + j.plane;
  for (int i = 0; i < M; ++i) {
    const int64_t h = j.th * M + i;
    for (int c = 0; c < M; ++c) {
      const int64_t x = j.tw * M + c;
      if (h < l.dst_h && x < l.dst_w) o[h * l.dst_w + x] = out[i * M + c];
    }
  }
}

/// P[xi][k][t] = (A dY A^T)[xi] for job = k * count + t: the m x m tile t0 + t of dy (channel
/// k of group g), zero past its edge (backward-filter).
template <int M>
CONVLAB_HD void winograd_gradient_tile(const winograd::WinogradLayout& l, int64_t g,
                                       const float* dy, int64_t t0, int64_t count, int64_t job,
                                       float* prod) {
  const WinogradJob j = winograd_job(l, g, /*source=*/false, t0, count, job);
  winograd_patch_to_points<M, PatchTransform::output_adjoint>(
      l, j, dy + j.plane, l.dst_h, l.dst_w, j.th * M, j.tw * M, l.product_point, prod);
}

/// dw[k, c] = G^T dU[.][k][c] G for kc = k * C/g + c of group g (backward-filter).
template <int M>
CONVLAB_HD void winograd_filter_gradient(const winograd::WinogradLayout& l, int64_t g,
                                         const float* du, int64_t kc, float* dw) {
  constexpr int kPoints = winograd::Tile<M>::points;
  const int64_t rows = l.dst_channels * l.src_channels;
  float pts[kPoints];
  for (int xi = 0; xi < kPoints; ++xi) pts[xi] = du[xi * l.filter_point + kc];
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
