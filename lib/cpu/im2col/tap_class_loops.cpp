#include "tap_class_loops.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace convlab::im2col {

namespace {

// One tap (c, i, j) of a class: the class's columns whose tap column reads inside the image
// (span, relative to the class's first column), the class's rows whose tap row does (rows,
// absolute), and where the first of span reads for output row 0, from the channel's plane.
struct ClassTap {
  OutputRange span;
  OutputRange rows;
  int64_t source = 0;  // + oh * stride_h * in_w for output row oh
};

ClassTap class_tap(const Im2colGeometry& g, const TapClass& tc, int64_t c, int64_t i, int64_t j) {
  ClassTap t;
  const OutputRange cols = valid_outputs(g.in_w, g.out_w, j, g.pad_w, g.stride_w, g.dilation_w);
  t.span.begin = std::clamp(cols.begin, tc.cols.begin, tc.cols.end) - tc.cols.begin;
  t.span.end =
      std::max(std::clamp(cols.end, tc.cols.begin, tc.cols.end) - tc.cols.begin, t.span.begin);
  const OutputRange rows = valid_outputs(g.in_h, g.out_h, i, g.pad_h, g.stride_h, g.dilation_h);
  t.rows.begin = std::clamp(rows.begin, tc.rows.begin, tc.rows.end);
  t.rows.end = std::max(std::clamp(rows.end, tc.rows.begin, tc.rows.end), t.rows.begin);
  if (t.span.end == t.span.begin) t.rows.end = t.rows.begin;  // no column reads inside
  t.source = c * plane_elems(g) + (i * g.dilation_h - g.pad_h) * g.in_w +
             input_coord(tc.cols.begin + t.span.begin, j, g.pad_w, g.stride_w, g.dilation_w);
  return t;
}

// dst[r * dst_stride + p] = src[r * src_stride + p] for r < rows, p < width: the rows of one
// tap or one output channel of a class. They are a few floats wide (5 in a 7x7 image's
// interior), where a library call per row costs more than the copy, so widths up to 16 run a
// copy of fixed size (unrolled into moves by the compiler); wider rows call memcpy.
template <int Width>
void copy_rows_of(const float* src, int64_t src_stride, int64_t rows, float* dst,
                  int64_t dst_stride) {
  for (int64_t r = 0; r < rows; ++r, src += src_stride, dst += dst_stride) {
    float row[Width];
    std::memcpy(row, src, sizeof row);
    std::memcpy(dst, row, sizeof row);
  }
}

using CopyRows = void (*)(const float*, int64_t, int64_t, float*, int64_t);
template <int... W>
constexpr std::array<CopyRows, sizeof...(W)> copy_rows_table(std::integer_sequence<int, W...>) {
  return {copy_rows_of<W + 1>...};
}
constexpr auto kCopyRows = copy_rows_table(std::make_integer_sequence<int, 16>{});

void copy_strided_rows(const float* src, int64_t src_stride, int64_t rows, int64_t width,
                       float* dst, int64_t dst_stride) {
  if (width >= 1 && width <= static_cast<int64_t>(kCopyRows.size())) {
    return kCopyRows[width - 1](src, src_stride, rows, dst, dst_stride);
  }
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * dst_stride, src + r * src_stride, sizeof(float) * width);
  }
}

// Rows at stride `stride` into a dense [rows, width] block, and back.
void copy_rows(const float* src, int64_t stride, int64_t rows, int64_t width, float* dst) {
  copy_strided_rows(src, stride, rows, width, dst, width);
}
void place_rows(const float* src, int64_t width, int64_t rows, int64_t stride, float* dst) {
  copy_strided_rows(src, width, rows, width, dst, stride);
}

// The adjoint: dst[r * stride + p] += src[r * width + p], with the same fixed widths.
template <int Width>
void add_rows_of(const float* src, int64_t stride, int64_t rows, float* dst) {
  for (int64_t r = 0; r < rows; ++r, src += Width, dst += stride) {
    for (int p = 0; p < Width; ++p) dst[p] += src[p];
  }
}
using AddRows = void (*)(const float*, int64_t, int64_t, float*);
template <int... W>
constexpr std::array<AddRows, sizeof...(W)> add_rows_table(std::integer_sequence<int, W...>) {
  return {add_rows_of<W + 1>...};
}
constexpr auto kAddRows = add_rows_table(std::make_integer_sequence<int, 16>{});

void add_rows(const float* src, int64_t width, int64_t rows, int64_t stride, float* dst) {
  if (width >= 1 && width <= static_cast<int64_t>(kAddRows.size())) {
    return kAddRows[width - 1](src, stride, rows, dst);
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t p = 0; p < width; ++p) dst[r * stride + p] += src[r * width + p];
  }
}

}  // namespace

// Plain loops rather than std::fill and std::copy: a class's rows are a few floats wide (an
// edge class of a 7x7 image is one), where a library call per row costs more than the copy.
// A tap's geometry depends on the channel only through the channel's plane, so it is worked
// out once per tap and the channels run inside.
void im2col_class_cpu(const Im2colGeometry& g, const TapClass& tc, const float* x_group,
                      float* col) {
  const int64_t width = range_size(tc.cols), pixels = class_pixels(tc);
  const int64_t ld = g.images * pixels, row_step = g.stride_h * g.in_w, sw = g.stride_w;
  const int64_t taps = class_taps(tc), plane = plane_elems(g);
  for (int64_t i = tc.taps_h.begin; i < tc.taps_h.end; ++i) {
    for (int64_t j = tc.taps_w.begin; j < tc.taps_w.end; ++j) {
      const ClassTap t = class_tap(g, tc, 0, i, j);
      const int64_t tap = (i - tc.taps_h.begin) * range_size(tc.taps_w) + (j - tc.taps_w.begin);
      float* first = col + tap * ld;
      // Every pixel of the class reads inside the image through this tap (the interior's
      // taps, and most of the edges'): a plain copy of rows x width per image.
      if (sw == 1 && t.span.begin == 0 && t.span.end == width && t.rows.begin == tc.rows.begin &&
          t.rows.end == tc.rows.end) {
        const int64_t rows = range_size(tc.rows);
        const float* source = x_group + t.source + tc.rows.begin * row_step;
        for (int64_t c = 0; c < g.channels; ++c) {
          float* d = first + c * taps * ld;
          for (int64_t m = 0; m < g.images; ++m) {
            copy_rows(source + c * plane + m * g.image_stride, row_step, rows, width,
                      d + m * pixels);
          }
        }
        continue;
      }
      for (int64_t c = 0; c < g.channels; ++c) {
        float* d = first + c * taps * ld;
        for (int64_t m = 0; m < g.images; ++m) {
          const float* x = x_group + m * g.image_stride + c * plane + t.source;
          float* out = d + m * pixels;
          for (int64_t oh = tc.rows.begin; oh < tc.rows.end; ++oh, out += width) {
            if (oh < t.rows.begin || oh >= t.rows.end) {
              for (int64_t p = 0; p < width; ++p) out[p] = 0.0f;
              continue;
            }
            const float* in = x + oh * row_step;
            for (int64_t p = 0; p < t.span.begin; ++p) out[p] = 0.0f;
            if (sw == 1) {
              for (int64_t p = t.span.begin; p < t.span.end; ++p) out[p] = in[p - t.span.begin];
            } else {
              for (int64_t p = t.span.begin; p < t.span.end; ++p)
                out[p] = in[(p - t.span.begin) * sw];
            }
            for (int64_t p = t.span.end; p < width; ++p) out[p] = 0.0f;
          }
        }
      }
    }
  }
}

void col2im_class_add_cpu(const Im2colGeometry& g, const TapClass& tc, const float* col,
                          float* dx_group) {
  const int64_t width = range_size(tc.cols), pixels = class_pixels(tc);
  const int64_t ld = g.images * pixels, row_step = g.stride_h * g.in_w, sw = g.stride_w;
  const float* s = col;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = tc.taps_h.begin; i < tc.taps_h.end; ++i) {
      for (int64_t j = tc.taps_w.begin; j < tc.taps_w.end; ++j, s += ld) {
        const ClassTap t = class_tap(g, tc, c, i, j);
        if (sw == 1 && t.span.begin == 0 && t.span.end == width && t.rows.begin == tc.rows.begin &&
            t.rows.end == tc.rows.end) {
          for (int64_t m = 0; m < g.images; ++m) {
            add_rows(s + m * pixels, width, range_size(tc.rows), row_step,
                     dx_group + m * g.image_stride + t.source + tc.rows.begin * row_step);
          }
          continue;
        }
        for (int64_t m = 0; m < g.images; ++m) {
          float* dx = dx_group + m * g.image_stride + t.source;
          const float* in = s + m * pixels + (t.rows.begin - tc.rows.begin) * width;
          for (int64_t oh = t.rows.begin; oh < t.rows.end; ++oh, in += width) {
            float* out = dx + oh * row_step;
            if (sw == 1) {
              for (int64_t p = t.span.begin; p < t.span.end; ++p) out[p - t.span.begin] += in[p];
            } else {
              for (int64_t p = t.span.begin; p < t.span.end; ++p)
                out[(p - t.span.begin) * sw] += in[p];
            }
          }
        }
      }
    }
  }
}

void add_class_filter_columns(const Im2colGeometry& g, const TapClass& tc, int64_t channels,
                              const float* sums, int64_t rows, float* dw, int64_t dw_stride) {
  const int64_t s = g.kernel_w, rs = g.kernel_h * g.kernel_w;
  const int64_t th = range_size(tc.taps_h), tw = range_size(tc.taps_w), n = channels * th * tw;
  if (n == 0) return;
  dw += tc.taps_h.begin * s + tc.taps_w.begin;
  for (int64_t r = 0; r < rows; ++r, sums += n, dw += dw_stride) {
    if (tw == s) {
      // Full tap rows: a channel's taps are one run of th * S columns.
      add_rows(sums, th * s, channels, rs, dw);
    } else if (th == g.kernel_h) {
      // Full tap columns: every (channel, tap row) starts S columns after the previous one.
      add_rows(sums, tw, channels * th, s, dw);
    } else {
      for (int64_t c = 0; c < channels; ++c) add_rows(sums + c * th * tw, tw, th, s, dw + c * rs);
    }
  }
}

void gather_class(const Im2colGeometry& g, const TapClass& tc, const float* src, int64_t rows,
                  int64_t channels_total, float* dst) {
  const int64_t width = range_size(tc.cols), pixels = class_pixels(tc);
  const int64_t plane = g.out_h * g.out_w, ld = g.images * pixels;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t m = 0; m < g.images; ++m) {
      const float* s = src + (m * channels_total + r) * plane + tc.rows.begin * g.out_w;
      copy_rows(s + tc.cols.begin, g.out_w, range_size(tc.rows), width, dst + r * ld + m * pixels);
    }
  }
}

void scatter_class(const Im2colGeometry& g, const TapClass& tc, const float* src, int64_t rows,
                   int64_t channels_total, float* dst) {
  const int64_t width = range_size(tc.cols), pixels = class_pixels(tc);
  const int64_t plane = g.out_h * g.out_w, ld = g.images * pixels;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t m = 0; m < g.images; ++m) {
      float* d = dst + (m * channels_total + r) * plane + tc.rows.begin * g.out_w;
      place_rows(src + r * ld + m * pixels, width, range_size(tc.rows), g.out_w, d + tc.cols.begin);
    }
  }
}

}  // namespace convlab::im2col
