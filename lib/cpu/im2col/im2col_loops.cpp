#include "im2col_loops.hpp"

#include <algorithm>
#include <cstring>

namespace convlab::im2col {

namespace {

// A run of one column-buffer row inside a block: the block columns [first, last) belong to
// one output row oh; of them [data_first, data_last) read x (from image offset `source` on,
// at stride stride_w), the rest read padding.
struct TapSegment {
  int64_t row = 0;
  int64_t first = 0, last = 0;
  int64_t data_first = 0, data_last = 0;
  int64_t source = 0;
};

// Calls visit(segment) for every (row, output row) of the output pixels [begin, end) of one
// image, rows in (c, i, j) order and output rows ascending; columns relative to begin.
template <class Visit>
void for_each_tap_segment(const Im2colGeometry& g, int64_t begin, int64_t end, Visit&& visit) {
  if (begin >= end) return;
  const int64_t plane = plane_elems(g);
  const int64_t oh_first = begin / g.out_w, oh_last = (end - 1) / g.out_w;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const OutputRange rows = valid_outputs(g.in_h, g.out_h, i, g.pad_h, g.stride_h, g.dilation_h);
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const OutputRange span =
            valid_outputs(g.in_w, g.out_w, j, g.pad_w, g.stride_w, g.dilation_w);
        TapSegment seg;
        seg.row = col_row(g, c, i, j);
        for (int64_t oh = oh_first; oh <= oh_last; ++oh) {
          const int64_t ow_a = oh == oh_first ? begin - oh * g.out_w : 0;
          const int64_t ow_b = oh == oh_last ? end - oh * g.out_w : g.out_w;
          const int64_t at = oh * g.out_w - begin;
          seg.first = at + ow_a;
          seg.last = at + ow_b;
          const bool reads = oh >= rows.begin && oh < rows.end;
          const int64_t v0 = reads ? std::min(std::max(span.begin, ow_a), ow_b) : ow_a;
          const int64_t v1 = reads ? std::max(std::min(span.end, ow_b), v0) : ow_a;
          seg.data_first = at + v0;
          seg.data_last = at + v1;
          seg.source =
              v1 > v0 ? c * plane + input_coord(oh, i, g.pad_h, g.stride_h, g.dilation_h) * g.in_w +
                            input_coord(v0, j, g.pad_w, g.stride_w, g.dilation_w)
                      : 0;
          visit(seg);
        }
      }
    }
  }
}

// Zeroes [d, d + n): a row's side padding, a float or two per output row, where a memset
// call (what std::fill of zeros becomes) cost more than the stores: 2 % of ResNet-50's 28x28
// forward pass went to those calls.
inline void zero_side(float* d, int64_t n) {
  if (n > 4) {
    std::fill(d, d + n, 0.0f);
    return;
  }
  if (n > 0) d[0] = 0.0f;
  if (n > 1) d[1] = 0.0f;
  if (n > 2) d[2] = 0.0f;
  if (n > 3) d[3] = 0.0f;
}

// With unit strides, no dilation across and output rows as wide as input rows (a "same"
// convolution such as 3x3 pad 1), output pixel p of tap (c, i, j) reads x at p plus a constant
// offset, so a tap's row over every data-reading output row of a block is one contiguous copy.
// The copy also brings in, at the columns that fall in the side padding, the neighbouring
// row's edge elements; those columns are zeroed afterwards. The result is the per-segment
// loop's, bit for bit, with one copy per tap instead of one per tap and output row.
bool rows_are_contiguous(const Im2colGeometry& g) {
  return g.stride_h == 1 && g.stride_w == 1 && g.dilation_w == 1 && g.out_w == g.in_w;
}

// One tap (c, i, j) of a rows_are_contiguous geometry over the block's pixels [begin, end):
// its column-buffer row, the pixels whose output row reads x ([first, last), empty when
// first >= last), the data-reading columns of each output row, and where pixel p reads:
// x_image[p + shift], inside channel c's plane [plane_begin, plane_begin + plane).
struct ContiguousTap {
  int64_t row = 0;
  int64_t first = 0, last = 0;
  OutputRange span;
  int64_t shift = 0;
  int64_t plane_begin = 0;
};

template <class Visit>
void for_each_contiguous_tap(const Im2colGeometry& g, int64_t begin, int64_t end, Visit&& visit) {
  const int64_t plane = plane_elems(g), width = g.in_w;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const OutputRange rows = valid_outputs(g.in_h, g.out_h, i, g.pad_h, 1, g.dilation_h);
      ContiguousTap tap;
      tap.first = std::max(begin, rows.begin * width);
      tap.last = std::min(end, rows.end * width);
      tap.plane_begin = c * plane;
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        tap.row = col_row(g, c, i, j);
        tap.span = valid_outputs(g.in_w, g.out_w, j, g.pad_w, 1, 1);
        tap.shift = c * plane + (i * g.dilation_h - g.pad_h) * width + j - g.pad_w;
        visit(tap);
      }
    }
  }
}

void im2col_block_contiguous(const Im2colGeometry& g, const float* x_image, int64_t begin,
                             int64_t end, float* col, int64_t ld) {
  const int64_t plane = plane_elems(g), width = g.in_w;
  for_each_contiguous_tap(g, begin, end, [&](const ContiguousTap& t) {
    float* d = col + t.row * ld;  // pixel p goes to d[p - begin]
    if (t.first >= t.last) {
      std::fill(d, d + (end - begin), 0.0f);
      return;
    }
    std::fill(d, d + (t.first - begin), 0.0f);
    std::fill(d + (t.last - begin), d + (end - begin), 0.0f);
    const int64_t lo = std::max(t.first, t.plane_begin - t.shift);
    const int64_t hi = std::min(t.last, t.plane_begin + plane - t.shift);
    if (hi > lo) std::copy(x_image + lo + t.shift, x_image + hi + t.shift, d + (lo - begin));
    for (int64_t row = t.first / width * width; row < t.last; row += width) {
      const int64_t a0 = std::max(t.first, row), a1 = std::min(t.last, row + t.span.begin);
      const int64_t b0 = std::max(t.first, row + t.span.end), b1 = std::min(t.last, row + width);
      zero_side(d + (a0 - begin), a1 - a0);
      zero_side(d + (b0 - begin), b1 - b0);
    }
  });
}

// col2im_block_add_cpu for rows_are_contiguous geometries: the same additions in the same
// order (taps in (c, i, j) order, output rows ascending, each row's data-reading span), with
// the span of a tap computed once instead of once per output row.
void col2im_block_add_contiguous(const Im2colGeometry& g, const float* col, int64_t ld,
                                 int64_t begin, int64_t end, float* dx_image) {
  const int64_t width = g.in_w;
  for_each_contiguous_tap(g, begin, end, [&](const ContiguousTap& t) {
    const float* src = col + t.row * ld;  // pixel p's entry is src[p - begin]
    for (int64_t row = t.first / width * width; row < t.last; row += width) {
      const int64_t a = std::max(t.first, row + t.span.begin);
      const int64_t b = std::min(t.last, row + t.span.end);
      float* d = dx_image + a + t.shift;
      const float* s = src + (a - begin);
      for (int64_t k = 0; k < b - a; ++k) d[k] += s[k];
    }
  });
}

}  // namespace

void im2col_block_cpu(const Im2colGeometry& g, const float* x_image, int64_t begin, int64_t end,
                      float* col, int64_t ld) {
  if (rows_are_contiguous(g)) return im2col_block_contiguous(g, x_image, begin, end, col, ld);
  for_each_tap_segment(g, begin, end, [&](const TapSegment& s) {
    float* d = col + s.row * ld;
    zero_side(d + s.first, s.data_first - s.first);
    const float* src = x_image + s.source;
    const int64_t n = s.data_last - s.data_first;
    if (g.stride_w == 1) {
      std::copy(src, src + n, d + s.data_first);
    } else {
      for (int64_t t = 0; t < n; ++t) d[s.data_first + t] = src[t * g.stride_w];
    }
    zero_side(d + s.data_last, s.last - s.data_last);
  });
}

void col2im_block_add_cpu(const Im2colGeometry& g, const float* col, int64_t ld, int64_t begin,
                          int64_t end, float* dx_image) {
  if (rows_are_contiguous(g)) return col2im_block_add_contiguous(g, col, ld, begin, end, dx_image);
  for_each_tap_segment(g, begin, end, [&](const TapSegment& s) {
    const float* src = col + s.row * ld + s.data_first;
    float* d = dx_image + s.source;
    const int64_t n = s.data_last - s.data_first;
    if (g.stride_w == 1) {
      for (int64_t t = 0; t < n; ++t) d[t] += src[t];
    } else {
      for (int64_t t = 0; t < n; ++t) d[t * g.stride_w] += src[t];
    }
  });
}

void im2col_cpu(const Im2colGeometry& g, const float* x_group, float* col) {
  const int64_t pixels = col_pixels(g), cols = col_cols(g);
  for (int64_t m = 0; m < g.images; ++m) {
    im2col_block_cpu(g, x_group + m * g.image_stride, 0, pixels, col + m * pixels, cols);
  }
}

void col2im_cpu(const Im2colGeometry& g, const float* col, float* dx_group) {
  // The gather, one input row (image, c, ih) at a time: the row starts at zero and takes
  // its taps in (i, j) order; for a fixed tap each input pixel receives at most one term,
  // so every pixel sums exactly the sequence col2im_element sums, in the same order.
  const int64_t pixels = col_pixels(g), cols = col_cols(g), plane = plane_elems(g);
  for (int64_t m = 0; m < g.images; ++m) {
    for (int64_t c = 0; c < g.channels; ++c) {
      float* dx_plane = dx_group + m * g.image_stride + c * plane;
      for (int64_t ih = 0; ih < g.in_h; ++ih) {
        float* dst = dx_plane + ih * g.in_w;
        std::fill(dst, dst + g.in_w, 0.0f);
        for (int64_t i = 0; i < g.kernel_h; ++i) {
          const int64_t oh = output_coord(ih, i, g.pad_h, g.stride_h, g.dilation_h, g.out_h);
          if (oh < 0) continue;
          for (int64_t j = 0; j < g.kernel_w; ++j) {
            const OutputRange span =
                valid_outputs(g.in_w, g.out_w, j, g.pad_w, g.stride_w, g.dilation_w);
            if (span.begin == span.end) continue;
            const float* src = col + col_row(g, c, i, j) * cols + m * pixels + oh * g.out_w;
            float* d = dst + input_coord(span.begin, j, g.pad_w, g.stride_w, g.dilation_w);
            const int64_t n = span.end - span.begin;
            if (g.stride_w == 1) {
              for (int64_t t = 0; t < n; ++t) d[t] += src[span.begin + t];
            } else {
              for (int64_t t = 0; t < n; ++t) d[t * g.stride_w] += src[span.begin + t];
            }
          }
        }
      }
    }
  }
}

void gather_images(const float* src, int64_t rows, int64_t pixels, int64_t images,
                   int64_t channels_total, float* dst) {
  const int64_t cols = images * pixels;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t m = 0; m < images; ++m) {
      const float* s = src + (m * channels_total + r) * pixels;
      std::memcpy(dst + r * cols + m * pixels, s, sizeof(float) * pixels);
    }
  }
}

void scatter_images(const float* src, int64_t rows, int64_t pixels, int64_t images,
                    int64_t channels_total, float* dst) {
  const int64_t cols = images * pixels;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t m = 0; m < images; ++m) {
      std::memcpy(dst + (m * channels_total + r) * pixels, src + r * cols + m * pixels,
                  sizeof(float) * pixels);
    }
  }
}

}  // namespace convlab::im2col
