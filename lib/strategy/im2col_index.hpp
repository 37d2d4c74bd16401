#pragma once
/// \file
/// The index math of im2col and of col2im-as-gather, shared by cpu.im2col and cuda.im2col.
///
/// One group of one convolution, `images` images side by side:
///
///   col[row, col_index]   row       = (c * R + i) * S + j          c < C/g, i < R, j < S
///                         col_index = image * OH*OW + oh * OW + ow  image < images
///   col[row, col_index] = x[image, c, ih, iw]  with  ih = oh*stride_h - pad_h + i*dilation_h
///                                                     iw = ow*stride_w - pad_w + j*dilation_w
///                         (0 where (ih, iw) falls in the padding)
///
/// so that the forward pass is the GEMM  y[K/g, images*OH*OW] = w[K/g, C/g*R*S] * col  (the
/// rows of a KCRS filter are exactly the rows of col), and backward-data forms
/// col = w^T * dy and folds it back with col2im. col2im here is a GATHER: input pixel
/// (image, c, ih, iw) sums, in (i, j) order from zero, the col entries whose forward tap read
/// it. Tap i reaches row ih from output row oh iff  ih + pad_h - i*dilation_h = oh*stride_h
/// with 0 <= oh < OH  (likewise j, iw, ow); at most one oh per (ih, i). No two pixels share
/// an accumulator, so there are no atomics and the sum order is fixed: deterministic.
///
/// Everything a kernel calls is CONVLAB_HD, pure, exception-free int64_t math on the plain
/// struct Im2colGeometry, which a kernel takes by value. The geometry is filled on the host
/// from a ConvProblem by make_im2col_geometry (not device code: it validates and throws).
/// Pointers `x_group` / `dx_group` point at channel 0 of the group in image 0, i.e.
/// x + group_offset(geometry, g) for the first image of the batch slice.

#include <cstdint>
#include <string>

#include "convlab/error.hpp"
#include "convlab/problem.hpp"
#include "strategy/fast_divmod.hpp"
#include "strategy/hd.hpp"

namespace convlab {

/// The geometry of one group's column buffer. Plain data: copy it into a kernel by value.
struct Im2colGeometry {
  int64_t channels = 0;  ///< C/g: input channels of one group
  int64_t in_h = 0;
  int64_t in_w = 0;
  int64_t kernel_h = 0;  ///< R
  int64_t kernel_w = 0;  ///< S
  int64_t pad_h = 0;
  int64_t pad_w = 0;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t dilation_h = 1;  ///< 1 = dense
  int64_t dilation_w = 1;
  int64_t out_h = 0;
  int64_t out_w = 0;
  int64_t images = 1;        ///< images side by side in one column buffer
  int64_t image_stride = 0;  ///< elements from one image to the next in x and dx: C*H*W
};

/// floor(a / b) for b > 0 and any sign of a (C++ division truncates toward zero).
CONVLAB_HD int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// Rows of the column buffer: (C/g) * R * S.
CONVLAB_HD int64_t col_rows(const Im2colGeometry& g) {
  return g.channels * g.kernel_h * g.kernel_w;
}
/// Output pixels of one image: OH * OW.
CONVLAB_HD int64_t col_pixels(const Im2colGeometry& g) { return g.out_h * g.out_w; }
/// Columns of the column buffer (its leading dimension, row-major): images * OH * OW.
CONVLAB_HD int64_t col_cols(const Im2colGeometry& g) { return g.images * col_pixels(g); }
/// Elements of the column buffer.
CONVLAB_HD int64_t col_elems(const Im2colGeometry& g) { return col_rows(g) * col_cols(g); }
/// Elements of one channel plane of x: H * W.
CONVLAB_HD int64_t plane_elems(const Im2colGeometry& g) { return g.in_h * g.in_w; }
/// Offset of group `group`'s channel 0 within an image of x (or dx).
CONVLAB_HD int64_t group_offset(const Im2colGeometry& g, int64_t group) {
  return group * g.channels * plane_elems(g);
}
/// The 1x1, stride-1, unpadded case: col would equal x itself, so im2col is skipped and the
/// GEMMs read x (or write dx) in place. An end padding shows as an output larger than x.
CONVLAB_HD bool is_pointwise(const Im2colGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 &&
         g.pad_w == 0 && g.out_h == g.in_h && g.out_w == g.in_w;
}

/// The row of tap (i, j) of channel c.
CONVLAB_HD int64_t col_row(const Im2colGeometry& g, int64_t c, int64_t i, int64_t j) {
  return (c * g.kernel_h + i) * g.kernel_w + j;
}

/// A row of the column buffer split into its channel and tap.
struct ColRow {
  int64_t c = 0;
  int64_t i = 0;
  int64_t j = 0;
};
CONVLAB_HD ColRow split_col_row(const Im2colGeometry& g, int64_t row) {
  ColRow r;
  r.j = row % g.kernel_w;
  r.i = (row / g.kernel_w) % g.kernel_h;
  r.c = row / (g.kernel_w * g.kernel_h);
  return r;
}

/// One dimension of the forward tap: the input coordinate output `out` reads through tap
/// `tap` (may lie in the padding: < 0 or >= the input size).
CONVLAB_HD int64_t input_coord(int64_t out, int64_t tap, int64_t pad, int64_t stride,
                               int64_t dilation) {
  return out * stride - pad + tap * dilation;
}

/// The inverse, for the gather: the output coordinate whose tap `tap` reads input `in`, or
/// -1 when none does (not on the stride grid, or outside [0, out_size)).
/// `stride` is a divider (strategy/fast_divmod.hpp): PlainDivmod, or FastDivmod in kernels.
template <class Divmod>
CONVLAB_HD int64_t output_coord_by(int64_t in, int64_t tap, int64_t pad, const Divmod& stride,
                                   int64_t dilation, int64_t out_size) {
  const int64_t t = in + pad - tap * dilation;
  if (t < 0) return -1;
  int64_t off_grid = 0;
  const int64_t out = stride.divmod(t, &off_grid);
  return off_grid == 0 && out < out_size ? out : -1;
}
CONVLAB_HD int64_t output_coord(int64_t in, int64_t tap, int64_t pad, int64_t stride,
                                int64_t dilation, int64_t out_size) {
  return output_coord_by(in, tap, pad, PlainDivmod{stride}, dilation, out_size);
}

/// The half-open range [begin, end) of outputs whose tap `tap` reads inside [0, in_size):
/// 0 <= out*stride - pad + tap*dilation < in_size, intersected with [0, out_size). Loops
/// over a row of col use it to split padding (zeros) from data without a test per element.
struct OutputRange {
  int64_t begin = 0;
  int64_t end = 0;  ///< begin == end: every output of this tap reads padding
};
CONVLAB_HD OutputRange valid_outputs(int64_t in_size, int64_t out_size, int64_t tap, int64_t pad,
                                     int64_t stride, int64_t dilation) {
  const int64_t base = tap * dilation - pad;  // input coordinate of output 0
  int64_t begin = -floor_div(base, stride);   // ceil(-base / stride)
  int64_t end = floor_div(in_size - 1 - base, stride) + 1;
  if (begin < 0) begin = 0;
  // Padding wider than the stride can put the first data-reading output past the last
  // output (e.g. ih1 kh6 sh2 ph3: tap 0's first is output 2 of 1); callers fill [0, begin)
  // and [end, out_size) with zeros, so both ends must stay within [0, out_size].
  if (begin > out_size) begin = out_size;
  if (end > out_size) end = out_size;
  OutputRange range;
  range.begin = begin;
  range.end = end > begin ? end : begin;
  return range;
}

/// Blocking one image's columns (cpu.im2col's `tile`): output pixels [0, pixels) cut into
/// blocks of `tile` in order, the last one shorter when tile does not divide pixels. A block
/// is its own column buffer of col_rows(g) x (end - begin), so the buffer stays tile wide.
/// tile <= 0 or >= pixels: one block, the whole image.
CONVLAB_HD int64_t pixel_block_count(int64_t pixels, int64_t tile) {
  return tile <= 0 || tile >= pixels ? 1 : (pixels + tile - 1) / tile;
}
/// Block `block` (< pixel_block_count) as the half-open range of the image's output pixels.
CONVLAB_HD OutputRange pixel_block(int64_t pixels, int64_t tile, int64_t block) {
  OutputRange range;
  if (tile <= 0 || tile >= pixels) {
    range.end = pixels;
    return range;
  }
  range.begin = block * tile;
  range.end = range.begin + tile < pixels ? range.begin + tile : pixels;
  return range;
}

/// Where col[row, col_index] comes from: its offset from x_group (image * image_stride +
/// c * H*W + ih * W + iw), or -1 when it reads padding (the element is 0).
/// The same within the channel plane of row `t`, for a column index split by `pixels`
/// (OH*OW) and `out_w` (dividers as in output_coord_by): image * image_stride + ih * W + iw,
/// or -1 in the padding.
template <class Divmod>
CONVLAB_HD int64_t im2col_tap_source(const Im2colGeometry& g, const ColRow& t, const Divmod& pixels,
                                     const Divmod& out_w, int64_t col_index) {
  int64_t p = 0, ow = 0;
  const int64_t image = pixels.divmod(col_index, &p);
  const int64_t oh = out_w.divmod(p, &ow);
  const int64_t ih = input_coord(oh, t.i, g.pad_h, g.stride_h, g.dilation_h);
  const int64_t iw = input_coord(ow, t.j, g.pad_w, g.stride_w, g.dilation_w);
  if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) return -1;
  return image * g.image_stride + ih * g.in_w + iw;
}
CONVLAB_HD int64_t im2col_source(const Im2colGeometry& g, int64_t row, int64_t col_index) {
  const ColRow t = split_col_row(g, row);
  const int64_t s =
      im2col_tap_source(g, t, PlainDivmod{col_pixels(g)}, PlainDivmod{g.out_w}, col_index);
  return s < 0 ? -1 : s + t.c * plane_elems(g);
}

/// col[row, col_index] read from x_group (one thread per element in a kernel).
CONVLAB_HD float im2col_element(const Im2colGeometry& g, const float* x_group, int64_t row,
                                int64_t col_index) {
  const int64_t source = im2col_source(g, row, col_index);
  return source < 0 ? 0.0f : x_group[source];
}

/// The gather of col2im: dx[image, c, ih, iw] of the group = the sum over taps (i, j), in
/// that order, from 0.0f, of col[col_row(c, i, j), image*OH*OW + oh*OW + ow] for the one
/// (oh, ow) per tap that reads (ih, iw), if any. `col` has col_cols(g) columns.
/// With the strides as dividers (output_coord_by); the same sums in the same order.
template <class Divmod>
CONVLAB_HD float col2im_element_by(const Im2colGeometry& g, const Divmod& stride_h,
                                   const Divmod& stride_w, const float* col, int64_t image,
                                   int64_t c, int64_t ih, int64_t iw) {
  const int64_t cols = col_cols(g);
  const int64_t base = image * col_pixels(g);
  float sum = 0.0f;
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    const int64_t oh = output_coord_by(ih, i, g.pad_h, stride_h, g.dilation_h, g.out_h);
    if (oh < 0) continue;
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      const int64_t ow = output_coord_by(iw, j, g.pad_w, stride_w, g.dilation_w, g.out_w);
      if (ow < 0) continue;
      sum += col[col_row(g, c, i, j) * cols + base + oh * g.out_w + ow];
    }
  }
  return sum;
}
CONVLAB_HD float col2im_element(const Im2colGeometry& g, const float* col, int64_t image, int64_t c,
                                int64_t ih, int64_t iw) {
  return col2im_element_by(g, PlainDivmod{g.stride_h}, PlainDivmod{g.stride_w}, col, image, c, ih,
                           iw);
}

/// The geometry of problem `p` with `images` images per column buffer (host only: validates
/// the problem and throws Error{invalid_argument} unless 1 <= images <= p.n).
inline Im2colGeometry make_im2col_geometry(const ConvProblem& p, int64_t images) {
  p.validate();
  if (images < 1 || images > p.n) {
    throw Error(ErrorCode::invalid_argument,
                "im2col geometry of " + p.descriptor() + ": " + std::to_string(images) +
                    " images per column buffer, expected 1 to mb " + std::to_string(p.n));
  }
  Im2colGeometry g;
  g.channels = p.c_per_group();
  g.in_h = p.h;
  g.in_w = p.w;
  g.kernel_h = p.r;
  g.kernel_w = p.s;
  g.pad_h = p.pad_h;
  g.pad_w = p.pad_w;
  g.stride_h = p.stride_h;
  g.stride_w = p.stride_w;
  g.dilation_h = p.dilation_h;
  g.dilation_w = p.dilation_w;
  g.out_h = p.out_h();
  g.out_w = p.out_w();
  g.images = images;
  g.image_stride = p.c * p.h * p.w;  // validate() guarantees x_elems fits int64
  // The buffer size itself must fit int64 (indices into it are int64).
  checked_mul(checked_mul(col_rows(g), col_pixels(g), "im2col column buffer elements"), images,
              "im2col column buffer elements");
  return g;
}

}  // namespace convlab
