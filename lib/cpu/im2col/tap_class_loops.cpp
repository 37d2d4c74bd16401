#include "tap_class_loops.hpp"

#include <algorithm>

#include "cpu/gemm_kernels/strided_rows.hpp"

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

}  // namespace

// A class's rows are a few floats wide (an edge class of a 7x7 image is one), where a library
// call per row costs more than the copy: stride 1 copies blocks of rows per call
// (cpu_gemm::copy_rows), wider strides run plain loops. A tap's geometry depends on the
// channel only through the channel's plane, so it is worked out once per tap and the channels
// run inside.
void im2col_class_cpu(const Im2colGeometry& g, const TapClass& tc, const float* x_group, float* col,
                      int64_t ld, CpuIsa isa) {
  const int64_t width = range_size(tc.cols), pixels = class_pixels(tc);
  const int64_t row_step = g.stride_h * g.in_w, sw = g.stride_w;
  const int64_t taps = class_taps(tc), plane = plane_elems(g);
  for (int64_t i = tc.taps_h.begin; i < tc.taps_h.end; ++i) {
    for (int64_t j = tc.taps_w.begin; j < tc.taps_w.end; ++j) {
      const ClassTap t = class_tap(g, tc, 0, i, j);
      const int64_t tap = (i - tc.taps_h.begin) * range_size(tc.taps_w) + (j - tc.taps_w.begin);
      float* first = col + tap * ld;
      if (sw == 1) {
        // The tap's rows of every channel and image: the pixels that read inside the image
        // through it, copied as blocks of rows (for most taps every pixel of the class, a
        // plain copy of rows x width per image), over zeros where some read padding (the
        // corners of an edge class). Copied per channel, image and row by the loops below,
        // the top row class of a 13x13 image took a third of its GEMM's time (AlexNet
        // conv3-conv5 forward on the AMD EPYC VM).
        const bool every_pixel = t.span.begin == 0 && t.span.end == width &&
                                 t.rows.begin == tc.rows.begin && t.rows.end == tc.rows.end;
        if (!every_pixel) {
          for (int64_t c = 0; c < g.channels; ++c) {
            std::fill_n(first + c * taps * ld, g.images * pixels, 0.0f);
          }
        }
        cpu_gemm::RowBlocks blocks;
        blocks.outer = g.channels;
        blocks.src_outer = plane;
        blocks.dst_outer = taps * ld;
        blocks.inner = g.images;
        blocks.src_inner = g.image_stride;
        blocks.dst_inner = pixels;
        cpu_gemm::copy_rows(isa, x_group + t.source + t.rows.begin * row_step, row_step,
                            range_size(t.rows), range_size(t.span),
                            first + (t.rows.begin - tc.rows.begin) * width + t.span.begin, width,
                            blocks);
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
                          float* dx_group, CpuIsa isa) {
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
            cpu_gemm::add_rows(isa, s + m * pixels, width, range_size(tc.rows), width,
                               dx_group + m * g.image_stride + t.source +
                                   tc.rows.begin * row_step,
                               row_step);
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
                              const float* sums, int64_t rows, float* dw, int64_t dw_stride,
                              CpuIsa isa) {
  const int64_t s = g.kernel_w, rs = g.kernel_h * g.kernel_w;
  const int64_t th = range_size(tc.taps_h), tw = range_size(tc.taps_w), n = channels * th * tw;
  if (n == 0) return;
  dw += tc.taps_h.begin * s + tc.taps_w.begin;
  for (int64_t r = 0; r < rows; ++r, sums += n, dw += dw_stride) {
    if (tw == s) {
      // Full tap rows: a channel's taps are one run of th * S columns.
      cpu_gemm::add_rows(isa, sums, th * s, channels, th * s, dw, rs);
    } else if (th == g.kernel_h) {
      // Full tap columns: every (channel, tap row) starts S columns after the previous one.
      cpu_gemm::add_rows(isa, sums, tw, channels * th, tw, dw, s);
    } else {
      for (int64_t c = 0; c < channels; ++c) {
        cpu_gemm::add_rows(isa, sums + c * th * tw, tw, th, tw, dw + c * rs, s);
      }
    }
  }
}

void gather_class(const Im2colGeometry& g, const TapClass& tc, const float* src, int64_t rows,
                  int64_t channels_total, float* dst, CpuIsa isa) {
  const int64_t width = range_size(tc.cols), pixels = class_pixels(tc);
  const int64_t plane = g.out_h * g.out_w, ld = g.images * pixels;
  cpu_gemm::RowBlocks blocks;
  blocks.outer = rows;
  blocks.src_outer = plane;
  blocks.dst_outer = ld;
  blocks.inner = g.images;
  blocks.src_inner = channels_total * plane;
  blocks.dst_inner = pixels;
  cpu_gemm::copy_rows(isa, src + tc.rows.begin * g.out_w + tc.cols.begin, g.out_w,
                      range_size(tc.rows), width, dst, width, blocks);
}

void scatter_class(const Im2colGeometry& g, const TapClass& tc, const float* src, int64_t rows,
                   int64_t channels_total, float* dst, CpuIsa isa) {
  const int64_t width = range_size(tc.cols), pixels = class_pixels(tc);
  const int64_t plane = g.out_h * g.out_w, ld = g.images * pixels;
  cpu_gemm::RowBlocks blocks;
  blocks.outer = rows;
  blocks.src_outer = ld;
  blocks.dst_outer = plane;
  blocks.inner = g.images;
  blocks.src_inner = pixels;
  blocks.dst_inner = channels_total * plane;
  cpu_gemm::copy_rows(isa, src, width, range_size(tc.rows), width,
                      dst + tc.rows.begin * g.out_w + tc.cols.begin, g.out_w, blocks);
}

}  // namespace convlab::im2col
