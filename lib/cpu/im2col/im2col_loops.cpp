#include "im2col_loops.hpp"

#include <algorithm>
#include <cstring>

namespace convlab::im2col {

void im2col_cpu(const Im2colGeometry& g, const float* x_group, float* col) {
  const int64_t pixels = col_pixels(g), cols = col_cols(g), plane = plane_elems(g);
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const OutputRange rows = valid_outputs(g.in_h, g.out_h, i, g.pad_h, g.stride_h, g.dilation_h);
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const OutputRange span =
            valid_outputs(g.in_w, g.out_w, j, g.pad_w, g.stride_w, g.dilation_w);
        const int64_t iw0 = input_coord(span.begin, j, g.pad_w, g.stride_w, g.dilation_w);
        const int64_t n = span.end - span.begin;
        float* dst_row = col + col_row(g, c, i, j) * cols;
        for (int64_t m = 0; m < g.images; ++m) {
          const float* src_plane = x_group + m * g.image_stride + c * plane;
          float* dst = dst_row + m * pixels;
          // Rows of output reading the top/bottom padding are all zeros.
          std::fill(dst, dst + rows.begin * g.out_w, 0.0f);
          for (int64_t oh = rows.begin; oh < rows.end; ++oh) {
            const int64_t ih = input_coord(oh, i, g.pad_h, g.stride_h, g.dilation_h);
            const float* src = src_plane + ih * g.in_w + iw0;
            float* d = dst + oh * g.out_w;
            std::fill(d, d + span.begin, 0.0f);
            if (g.stride_w == 1) {
              std::copy(src, src + n, d + span.begin);
            } else {
              for (int64_t t = 0; t < n; ++t) d[span.begin + t] = src[t * g.stride_w];
            }
            std::fill(d + span.end, d + g.out_w, 0.0f);
          }
          std::fill(dst + rows.end * g.out_w, dst + pixels, 0.0f);
        }
      }
    }
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
