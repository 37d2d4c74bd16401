#pragma once
// The kernels of cuda.im2col: their per-element math (CONVLAB_HD, so host tests run the
// very same functions) and their launchers (im2col_kernels.cu). CUDA-free declarations: the
// stream is CUstream_st* (cudaStream_t). Each launcher checks the launch and throws
// convlab::Error on failure.

#include <cstdint>

#include "strategy/im2col_index.hpp"

struct CUstream_st;

namespace convlab::cuda {

/// The divisors of the kernels' index math, made on the host once per launch
/// (strategy/fast_divmod.hpp): no division per element.
struct Im2colDivisors {
  FastDivmod pixels, out_w;           ///< im2col: column index -> image, oh, ow
  FastDivmod per_image, plane, in_w;  ///< col2im: dx index -> image, channel, ih, iw
  FastDivmod stride_h, stride_w;      ///< col2im: input -> output on the stride grid
  static Im2colDivisors of(const Im2colGeometry& g) {
    return {FastDivmod::make(col_pixels(g)),
            FastDivmod::make(g.out_w),
            FastDivmod::make(g.channels * plane_elems(g)),
            FastDivmod::make(plane_elems(g)),
            FastDivmod::make(g.in_w),
            FastDivmod::make(g.stride_h),
            FastDivmod::make(g.stride_w)};
  }
};

/// col[row, col_index] for the row whose channel and tap are `t` (split once per row),
/// x_c = the group's channel t.c plane of image 0: im2col_source's arithmetic with the row
/// split hoisted out of the per-element work.
CONVLAB_HD float im2col_gather(const Im2colGeometry& g, const Im2colDivisors& d, const ColRow& t,
                               const float* x_c, int64_t col_index) {
  const int64_t s = im2col_tap_source(g, t, d.pixels, d.out_w, col_index);
  return s < 0 ? 0.0f : x_c[s];
}

/// Element e of dx_group in the order the col2im kernel walks it (image, channel, ih, iw):
/// col2im_element's sum, and in *offset where it goes (images are image_stride apart).
CONVLAB_HD float col2im_gather(const Im2colGeometry& g, const Im2colDivisors& d, const float* col,
                               int64_t e, int64_t* offset) {
  int64_t rest = 0, pixel = 0, iw = 0;
  const int64_t image = d.per_image.divmod(e, &rest);
  const int64_t c = d.plane.divmod(rest, &pixel);
  const int64_t ih = d.in_w.divmod(pixel, &iw);
  *offset = image * g.image_stride + rest;
  return col2im_element_by(g, d.stride_h, d.stride_w, col, image, c, ih, iw);
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
