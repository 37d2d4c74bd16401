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

}  // namespace

void im2col_block_cpu(const Im2colGeometry& g, const float* x_image, int64_t begin, int64_t end,
                      float* col, int64_t ld) {
  for_each_tap_segment(g, begin, end, [&](const TapSegment& s) {
    float* d = col + s.row * ld;
    std::fill(d + s.first, d + s.data_first, 0.0f);
    const float* src = x_image + s.source;
    const int64_t n = s.data_last - s.data_first;
    if (g.stride_w == 1) {
      std::copy(src, src + n, d + s.data_first);
    } else {
      for (int64_t t = 0; t < n; ++t) d[s.data_first + t] = src[t * g.stride_w];
    }
    std::fill(d + s.data_last, d + s.last, 0.0f);
  });
}

void col2im_block_add_cpu(const Im2colGeometry& g, const float* col, int64_t ld, int64_t begin,
                          int64_t end, float* dx_image) {
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
