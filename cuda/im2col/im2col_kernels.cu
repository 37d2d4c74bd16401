// The kernels of cuda.im2col: im2col, col2im as a gather, and the staging copy. The index
// math is strategy/im2col_index.hpp's, shared with cpu.im2col; one thread per output element,
// grid-stride loops in int64_t (buffers may exceed 2^31 elements).
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/grid.hpp"
#include "im2col_kernels.hpp"

namespace convlab::cuda {
namespace {

// One block row per column-buffer row (channel and tap split once per row, not per element),
// threads along the row's images * OH * OW columns, so writes are coalesced.
__global__ void im2col_kernel(Im2colGeometry g, Im2colDivisors d, const float* __restrict__ x_group,
                              float* __restrict__ col) {
  const int64_t cols = col_cols(g);
  const int64_t rows = col_rows(g);
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const ColRow t = split_col_row(g, row);
    const float* x_c = x_group + t.c * plane_elems(g);
    float* out = col + row * cols;
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < cols;
         e += int64_t(gridDim.x) * blockDim.x) {
      out[e] = im2col_gather(g, d, t, x_c, e);
    }
  }
}

__global__ void col2im_kernel(Im2colGeometry g, Im2colDivisors d, const float* __restrict__ col,
                              float* __restrict__ dx_group) {
  const int64_t total = g.images * g.channels * plane_elems(g);
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t offset = 0;
    const float sum = col2im_gather(g, d, col, e, &offset);
    dx_group[offset] = sum;
  }
}

__global__ void stage_kernel(const float* __restrict__ src, int64_t src_image_stride,
                             int64_t images, int64_t rows, int64_t cols, float* __restrict__ dst) {
  const int64_t total = rows * images * cols;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    dst[e] = src[stage_source(e, src_image_stride, images, rows, cols)];
  }
}

}  // namespace

void launch_im2col(const Im2colGeometry& g, const float* x_group, float* col, CUstream_st* stream) {
  const int64_t rows = col_rows(g);
  const int64_t x_blocks = (col_cols(g) + kThreads - 1) / kThreads;
  const dim3 grid(static_cast<unsigned>(x_blocks < 1024 ? x_blocks : 1024),
                  static_cast<unsigned>(rows < 65535 ? rows : 65535));
  // The divisors are made here, on the host, once per launch (no device work, capturable).
  im2col_kernel<<<grid, kThreads, 0, stream>>>(g, Im2colDivisors::of(g), x_group, col);
  CONVLAB_CUDA_CHECK_LAUNCH("im2col_kernel");
}

void launch_col2im(const Im2colGeometry& g, const float* col, float* dx_group,
                   CUstream_st* stream) {
  col2im_kernel<<<grid_for(g.images * g.channels * plane_elems(g)), kThreads, 0, stream>>>(
      g, Im2colDivisors::of(g), col, dx_group);
  CONVLAB_CUDA_CHECK_LAUNCH("col2im_kernel");
}

void launch_stage(const float* src, int64_t src_image_stride, int64_t images, int64_t rows,
                  int64_t cols, float* dst, CUstream_st* stream) {
  stage_kernel<<<grid_for(images * rows * cols), kThreads, 0, stream>>>(src, src_image_stride,
                                                                        images, rows, cols, dst);
  CONVLAB_CUDA_CHECK_LAUNCH("stage_kernel");
}

}  // namespace convlab::cuda
