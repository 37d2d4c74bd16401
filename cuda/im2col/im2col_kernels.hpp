#pragma once
// The kernels of cuda.im2col: their per-element math (CONVLAB_HD, so host tests run the
// very same functions) and their launchers (im2col_kernels.cu). CUDA-free declarations: the
// stream is CUstream_st* (cudaStream_t). Each launcher checks the launch and throws
// convlab::Error on failure.

#include <cstdint>

#include "strategy/im2col_index.hpp"

struct CUstream_st;

namespace convlab::cuda {

/// col[row, col_index] for the row whose channel and tap are `t` (split once per row),
/// x_c = the group's channel t.c plane of image 0: im2col_source's arithmetic with the row
/// split hoisted out of the per-element work.
CONVLAB_HD float im2col_gather(const Im2colGeometry& g, const ColRow& t, const float* x_c,
                               int64_t col_index) {
  const int64_t pixels = col_pixels(g);
  const int64_t image = col_index / pixels;
  const int64_t p = col_index - image * pixels;
  const int64_t oh = p / g.out_w;
  const int64_t ow = p - oh * g.out_w;
  const int64_t ih = input_coord(oh, t.i, g.pad_h, g.stride_h, g.dilation_h);
  const int64_t iw = input_coord(ow, t.j, g.pad_w, g.stride_w, g.dilation_w);
  const bool inside = ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w;
  return inside ? x_c[image * g.image_stride + ih * g.in_w + iw] : 0.0f;
}

/// Element e of the staged matrix [rows, images * cols]: its offset in the source, whose
/// images are src_image_stride apart.
CONVLAB_HD int64_t stage_source(int64_t e, int64_t src_image_stride, int64_t images, int64_t rows,
                                int64_t cols) {
  const int64_t width = images * cols;
  const int64_t r = e / width;
  const int64_t rest = e - r * width;
  const int64_t m = rest / cols;
  (void)rows;
  return m * src_image_stride + r * cols + (rest - m * cols);
}

/// col[col_rows(g), col_cols(g)] from x_group (image 0 of the chunk, channel 0 of the group).
void launch_im2col(const Im2colGeometry& g, const float* x_group, float* col, CUstream_st* stream);

/// dx_group[image, c, ih, iw] for image < g.images, c < g.channels, by the gather of
/// col2im_element (overwrites: beta = 0).
void launch_col2im(const Im2colGeometry& g, const float* col, float* dx_group, CUstream_st* stream);

/// Stages `images` planes of rows x cols into one [rows, images * cols] matrix:
/// dst[r, m*cols + c] = src[m*src_image_stride + r*cols + c] (dy of a chunk and a group for
/// backward-filter, so the sum over images becomes the GEMM's inner dimension).
void launch_stage(const float* src, int64_t src_image_stride, int64_t images, int64_t rows,
                  int64_t cols, float* dst, CUstream_st* stream);

}  // namespace convlab::cuda
