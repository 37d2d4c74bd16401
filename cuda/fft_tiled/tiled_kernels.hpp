#pragma once
// The kernels of cuda.fft_tiled around cuda.fft's plan of the sub-problem: gathering patches
// and tiles, copying tiles out, overlap-add as a gather (each dx element sums the patch rows
// that hold it, in tile order: no atomics, deterministic), and adding a batch's dw. The
// per-element functions are CONVLAB_HD so the host tests run exactly what the kernels run;
// the index math is strategy/tiled_fft_geometry.hpp's. CUDA-free declarations.

#include <cstdint>

#include "strategy/tiled_fft_geometry.hpp"

struct CUstream_st;

namespace convlab::cuda {

/// Element e of a batch's gathered patches (count * channels planes of patch_h x patch_w)
/// from `src` (N x channels x h x w): x for forward/backward-filter.
CONVLAB_HD float tiled_patch_value(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                                   int64_t h, int64_t w, const float* src, int64_t e) {
  const int64_t pw = g.w.patch, ph = g.h.patch;
  const int64_t col = e % pw, row = (e / pw) % ph, plane = e / (pw * ph);
  const TiledFftPair pair = tiled_fft_pair(g, b.first + plane / channels);
  const int64_t ih = tiled_fft_input_index(g.h, pair.th, row);
  const int64_t iw = tiled_fft_input_index(g.w, pair.tw, col);
  if (ih < 0 || iw < 0) return 0.0f;
  return src[((pair.image * channels + plane % channels) * h + ih) * w + iw];
}

/// Where element e of a batch's tiles goes in y (N x channels x oh x ow), or -1 for the
/// overhang.
CONVLAB_HD int64_t tiled_y_index(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                                 int64_t oh, int64_t ow, int64_t e) {
  const int64_t tw = g.w.tile, th = g.h.tile;
  const int64_t col = e % tw, row = (e / tw) % th, plane = e / (tw * th);
  const TiledFftPair pair = tiled_fft_pair(g, b.first + plane / channels);
  const int64_t o = tiled_fft_output_index(g.h, pair.th, row);
  const int64_t q = tiled_fft_output_index(g.w, pair.tw, col);
  if (o < 0 || q < 0) return -1;
  return ((pair.image * channels + plane % channels) * oh + o) * ow + q;
}

/// Element e of a batch's gathered tiles (count * channels planes of tile_h x tile_w) from
/// dy (N x channels x oh x ow, laid out as y); zero for the overhang past the output.
CONVLAB_HD float tiled_tile_value(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                                  int64_t oh, int64_t ow, const float* dy, int64_t e) {
  const int64_t i = tiled_y_index(g, b, channels, oh, ow, e);
  return i < 0 ? 0.0f : dy[i];
}

/// The first image a batch touches.
CONVLAB_HD int64_t tiled_first_image(const TiledFftGeometry& g, TiledBatch b) {
  return b.first / g.tiles;
}
/// The images a batch touches.
CONVLAB_HD int64_t tiled_images(const TiledFftGeometry& g, TiledBatch b) {
  return (b.first + b.count - 1) / g.tiles - b.first / g.tiles + 1;
}

/// What the batch's dx patches add to element e of dx restricted to the batch's images
/// (images * channels * h * w, from tiled_first_image): the sum, in tile order, of the patch
/// elements that hold it.
CONVLAB_HD float tiled_dx_sum(const TiledFftGeometry& g, TiledBatch b, int64_t channels, int64_t h,
                              int64_t w, const float* patches, int64_t e) {
  const int64_t iw = e % w, ih = (e / w) % h, plane = e / (w * h);
  const int64_t image = tiled_first_image(g, b) + plane / channels, c = plane % channels;
  int64_t h0 = 0, h1 = -1, w0 = 0, w1 = -1;
  tiled_fft_tiles_covering(g.h, ih, &h0, &h1);
  tiled_fft_tiles_covering(g.w, iw, &w0, &w1);
  float sum = 0.0f;
  for (int64_t th = h0; th <= h1; ++th) {
    for (int64_t tw = w0; tw <= w1; ++tw) {
      const int64_t q = image * g.tiles + th * g.w.tiles + tw;
      if (q < b.first || q >= b.first + b.count) continue;
      const int64_t row = tiled_fft_patch_row(g.h, th, ih), col = tiled_fft_patch_row(g.w, tw, iw);
      sum += patches[(((q - b.first) * channels + c) * g.h.patch + row) * g.w.patch + col];
    }
  }
  return sum;
}

void launch_tiled_gather_patches(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                                 int64_t h, int64_t w, const float* src, float* patches,
                                 CUstream_st* stream);
void launch_tiled_gather_tiles(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                               int64_t oh, int64_t ow, const float* dy, float* tiles,
                               CUstream_st* stream);
void launch_tiled_scatter_tiles(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                                int64_t oh, int64_t ow, const float* tiles, float* y,
                                CUstream_st* stream);
/// dx (of the batch's images) += the batch's patches.
void launch_tiled_add_patches(const TiledFftGeometry& g, TiledBatch b, int64_t channels, int64_t h,
                              int64_t w, const float* patches, float* dx, CUstream_st* stream);
/// dst[i] += src[i] for i < n.
void launch_tiled_accumulate(const float* src, int64_t n, float* dst, CUstream_st* stream);

}  // namespace convlab::cuda
