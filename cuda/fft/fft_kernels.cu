// The kernels of cuda.fft around cuFFT and cuBLAS: placement into the transform planes
// (a gather: each slot reads at most one element, fft_element_at), the crop back out (or,
// for the fused crop, its header and zeros), the spectra's transpose for contiguous
// transforms, and the trivial 1 x 1 transform. Grid-stride loops in int64_t; the index splits
// divide by multiplication (PlaneSplit, PlacementSteps in fft_kernels.hpp).
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/grid.hpp"
#include "fft_kernels.hpp"

namespace convlab::cuda {
namespace {

__global__ void place_kernel(FftPlacement pl, PlacementSteps steps, PlaneSplit split,
                             const float* __restrict__ src, int64_t src_h, int64_t src_w,
                             int64_t total, float* __restrict__ staging) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    staging[e] = fft_place_value(pl, steps, split, src, src_h, src_w, e);
  }
}

__global__ void place_pair_kernel(StagedInput a, StagedInput b, int64_t a_floats, int64_t b_offset,
                                  PlaneSplit split, int64_t covered, float* __restrict__ staging) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < covered;
       e += int64_t(gridDim.x) * blockDim.x) {
    float v = 0.0f;
    if (fft_place_pair_value(a, b, a_floats, b_offset, split, e, &v)) staging[e] = v;
  }
}

__global__ void crop_kernel(FftPlacement pl, PlaneSplit split, const float* __restrict__ staging,
                            int64_t hf, int64_t wf, int64_t total, float scale,
                            float* __restrict__ dst) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    dst[e] = fft_crop_value(pl, split, staging, hf, wf, scale, e);
  }
}

__global__ void crop_prepare_kernel(FftCropTarget target, FftCropTarget* __restrict__ header,
                                    PlaneSplit split, int64_t total) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (first == 0) *header = target;
  for (int64_t e = first; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    fft_crop_zero_unplaced(target, split, e);
  }
}

__global__ void spectrum_to_cropped_kernel(const float2* __restrict__ spectrum, int64_t planes,
                                           FftCropTarget target) {
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < planes;
       p += int64_t(gridDim.x) * blockDim.x) {
    fft_crop_store(target, p, spectrum[p].x);
  }
}

// A tile of 32 x 32 complex elements goes through shared memory, so that both the reads of
// src's rows and the writes of dst's rows are coalesced (a one-element-per-thread transpose
// reads or writes with a stride of a whole row). The extra column spreads a tile column
// over the banks. Blocks of 32 x 8 threads, four rows each; the tiles grid-stride, with one
// division per tile (not per element).
constexpr int kTile = 32, kTileRows = 8;

__global__ void transpose_complex_kernel(const float2* __restrict__ src, int64_t rows, int64_t cols,
                                         int64_t tiles_across, int64_t tiles,
                                         float2* __restrict__ dst) {
  __shared__ float2 tile[kTile][kTile + 1];
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t r0 = t / tiles_across * kTile, c0 = t % tiles_across * kTile;
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[k][threadIdx.x] = src[r * cols + c];
    }
    __syncthreads();
    // dst row c, column r: the tile's column k read down as row k of the output tile.
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t c = c0 + k, r = r0 + threadIdx.x;
      if (r < rows && c < cols) dst[c * rows + r] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

__global__ void real_to_spectrum_kernel(const float* __restrict__ staging, int64_t planes,
                                        float2* __restrict__ spectrum) {
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < planes;
       p += int64_t(gridDim.x) * blockDim.x) {
    spectrum[p] = make_float2(staging[p], 0.0f);
  }
}

__global__ void spectrum_to_real_kernel(const float2* __restrict__ spectrum, int64_t planes,
                                        float* __restrict__ staging) {
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < planes;
       p += int64_t(gridDim.x) * blockDim.x) {
    staging[p] = spectrum[p].x;
  }
}

}  // namespace

void launch_place(const FftPlacement& placement, const float* src, int64_t src_h, int64_t src_w,
                  int64_t planes, int64_t hf, int64_t wf, float* staging, CUstream_st* stream) {
  // The divisors are made here, on the host, once per launch (no device work, capturable).
  const int64_t total = planes * hf * wf;
  CONVLAB_LAUNCH_GRID_STRIDE(place_kernel, total, stream, placement, PlacementSteps::of(placement),
                             PlaneSplit::of(hf, wf), src, src_h, src_w, total, staging);
}

void launch_place_pair(const StagedInput& a, const StagedInput& b, const FftStagingLayout& layout,
                       int64_t hf, int64_t wf, float* staging, CUstream_st* stream) {
  const int64_t covered = layout.covered();
  CONVLAB_LAUNCH_GRID_STRIDE(place_pair_kernel, covered, stream, a, b, layout.a_floats,
                             layout.b_offset, PlaneSplit::of(hf, wf), covered, staging);
}

void launch_crop(const FftPlacement& placement, const float* staging, int64_t hf, int64_t wf,
                 int64_t planes, int64_t dst_h, int64_t dst_w, float scale, float* dst,
                 CUstream_st* stream) {
  const int64_t total = planes * dst_h * dst_w;
  CONVLAB_LAUNCH_GRID_STRIDE(crop_kernel, total, stream, placement, PlaneSplit::of(dst_h, dst_w),
                             staging, hf, wf, total, scale, dst);
}

void launch_crop_prepare(const FftCropTarget& target, int64_t planes, void* header,
                         CUstream_st* stream) {
  // Only x has elements without a slot, and only when some input rows or columns meet no
  // kept output; otherwise one thread writes the header and the grid is one block.
  const bool unplaced =
      target.placement.h.count < target.dst_h || target.placement.w.count < target.dst_w;
  const int64_t total = unplaced ? planes * target.dst_h * target.dst_w : 0;
  CONVLAB_LAUNCH_GRID_STRIDE(crop_prepare_kernel, total, stream, target,
                             static_cast<FftCropTarget*>(header),
                             PlaneSplit::of(target.dst_h, target.dst_w), total);
}

void launch_spectrum_to_cropped(const float* spectrum, int64_t planes, const FftCropTarget& target,
                                CUstream_st* stream) {
  CONVLAB_LAUNCH_GRID_STRIDE(spectrum_to_cropped_kernel, planes, stream,
                             reinterpret_cast<const float2*>(spectrum), planes, target);
}

void launch_transpose_complex(const float* src, int64_t rows, int64_t cols, float* dst,
                              CUstream_st* stream) {
  const int64_t across = (cols + kTile - 1) / kTile;
  const int64_t tiles = (rows + kTile - 1) / kTile * across;
  const unsigned blocks = static_cast<unsigned>(tiles < 65535 * 8 ? tiles : 65535 * 8);
  transpose_complex_kernel<<<blocks, dim3(kTile, kTileRows), 0, stream>>>(
      reinterpret_cast<const float2*>(src), rows, cols, across, tiles,
      reinterpret_cast<float2*>(dst));
  CONVLAB_CUDA_CHECK_LAUNCH("transpose_complex_kernel");
}

void launch_real_to_spectrum(const float* staging, int64_t planes, float* spectrum,
                             CUstream_st* stream) {
  CONVLAB_LAUNCH_GRID_STRIDE(real_to_spectrum_kernel, planes, stream, staging, planes,
                             reinterpret_cast<float2*>(spectrum));
}

void launch_spectrum_to_real(const float* spectrum, int64_t planes, float* staging,
                             CUstream_st* stream) {
  CONVLAB_LAUNCH_GRID_STRIDE(spectrum_to_real_kernel, planes, stream,
                             reinterpret_cast<const float2*>(spectrum), planes, staging);
}

}  // namespace convlab::cuda
