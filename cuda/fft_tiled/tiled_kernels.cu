// The kernels of cuda.fft_tiled (tiled_kernels.hpp has the per-element math): grid-stride
// loops in int64_t, one output element per thread and step.
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/grid.hpp"
#include "tiled_kernels.hpp"

namespace convlab::cuda {
namespace {

#define CONVLAB_GRID_STRIDE(e, total)                                           \
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < (total); \
       e += int64_t(gridDim.x) * blockDim.x)

__global__ void gather_patches_kernel(TiledFftGeometry g, TiledBatch b, int64_t channels, int64_t h,
                                      int64_t w, const float* __restrict__ src,
                                      float* __restrict__ patches) {
  const int64_t total = b.count * channels * g.h.patch * g.w.patch;
  CONVLAB_GRID_STRIDE(e, total) { patches[e] = tiled_patch_value(g, b, channels, h, w, src, e); }
}

// The elements of a batch's tiles: what the tile gather and scatter run over.
__host__ __device__ inline int64_t tile_elements(const TiledFftGeometry& g, TiledBatch b,
                                                 int64_t channels) {
  return b.count * channels * g.h.tile * g.w.tile;
}

__global__ void gather_tiles_kernel(TiledFftGeometry g, TiledBatch b, int64_t channels, int64_t oh,
                                    int64_t ow, const float* __restrict__ dy,
                                    float* __restrict__ tiles) {
  const int64_t total = tile_elements(g, b, channels);
  CONVLAB_GRID_STRIDE(e, total) { tiles[e] = tiled_tile_value(g, b, channels, oh, ow, dy, e); }
}

__global__ void scatter_tiles_kernel(TiledFftGeometry g, TiledBatch b, int64_t channels, int64_t oh,
                                     int64_t ow, const float* __restrict__ tiles,
                                     float* __restrict__ y) {
  const int64_t total = tile_elements(g, b, channels);
  CONVLAB_GRID_STRIDE(e, total) {
    const int64_t i = tiled_y_index(g, b, channels, oh, ow, e);
    if (i >= 0) y[i] = tiles[e];
  }
}

__global__ void add_patches_kernel(TiledFftGeometry g, TiledBatch b, int64_t channels, int64_t h,
                                   int64_t w, const float* __restrict__ patches,
                                   float* __restrict__ dx) {
  const int64_t total = tiled_images(g, b) * channels * h * w;
  CONVLAB_GRID_STRIDE(e, total) { dx[e] += tiled_dx_sum(g, b, channels, h, w, patches, e); }
}

__global__ void accumulate_kernel(const float* __restrict__ src, int64_t n,
                                  float* __restrict__ dst) {
  CONVLAB_GRID_STRIDE(e, n) { dst[e] += src[e]; }
}

}  // namespace

void launch_tiled_gather_patches(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                                 int64_t h, int64_t w, const float* src, float* patches,
                                 CUstream_st* stream) {
  CONVLAB_LAUNCH_GRID_STRIDE(gather_patches_kernel, b.count * channels * g.h.patch * g.w.patch,
                             stream, g, b, channels, h, w, src, patches);
}

void launch_tiled_gather_tiles(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                               int64_t oh, int64_t ow, const float* dy, float* tiles,
                               CUstream_st* stream) {
  CONVLAB_LAUNCH_GRID_STRIDE(gather_tiles_kernel, tile_elements(g, b, channels), stream, g, b,
                             channels, oh, ow, dy, tiles);
}

void launch_tiled_scatter_tiles(const TiledFftGeometry& g, TiledBatch b, int64_t channels,
                                int64_t oh, int64_t ow, const float* tiles, float* y,
                                CUstream_st* stream) {
  CONVLAB_LAUNCH_GRID_STRIDE(scatter_tiles_kernel, tile_elements(g, b, channels), stream, g, b,
                             channels, oh, ow, tiles, y);
}

void launch_tiled_add_patches(const TiledFftGeometry& g, TiledBatch b, int64_t channels, int64_t h,
                              int64_t w, const float* patches, float* dx, CUstream_st* stream) {
  float* first = dx + tiled_first_image(g, b) * channels * h * w;
  CONVLAB_LAUNCH_GRID_STRIDE(add_patches_kernel, tiled_images(g, b) * channels * h * w, stream, g,
                             b, channels, h, w, patches, first);
}

void launch_tiled_accumulate(const float* src, int64_t n, float* dst, CUstream_st* stream) {
  CONVLAB_LAUNCH_GRID_STRIDE(accumulate_kernel, n, stream, src, n, dst);
}

}  // namespace convlab::cuda
