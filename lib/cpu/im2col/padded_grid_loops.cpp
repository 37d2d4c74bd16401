#include "padded_grid_loops.hpp"

#include <algorithm>
#include <cstring>

namespace convlab::im2col {

void pad_into_grid(const Im2colGeometry& g, const PaddedGrid& grid, const float* x_image,
                   float* padded) {
  // Grid row r holds x row r - pad_h, grid column s x column s - pad_w; a negative pad (the
  // transposed convolution of a problem padded beyond its kernel) starts the grid inside x.
  // The columns a row shares with the next are the next row's left padding, and the plane's
  // last `shared` floats its last row's: zeros all.
  const int64_t r0 = std::clamp<int64_t>(g.pad_h, 0, grid.height);
  const int64_t r1 = std::clamp<int64_t>(g.pad_h + g.in_h, r0, grid.height);
  const int64_t s0 = std::clamp<int64_t>(g.pad_w, 0, grid.width);
  const int64_t s1 = std::clamp<int64_t>(g.pad_w + g.in_w, s0, grid.width);
  const int64_t plane = grid.plane;
  for (int64_t c = 0; c < g.channels; ++c) {
    float* dst = padded + c * plane;
    const float* src = x_image + c * plane_elems(g);
    std::fill(dst, dst + r0 * grid.width, 0.0f);
    for (int64_t r = r0; r < r1; ++r) {
      float* row = dst + r * grid.width;
      std::fill(row, row + s0, 0.0f);
      if (s1 > s0) {
        std::memcpy(row + s0, src + (r - g.pad_h) * g.in_w + (s0 - g.pad_w),
                    static_cast<std::size_t>(s1 - s0) * sizeof(float));
      }
      std::fill(row + s1, row + grid.width, 0.0f);
    }
    std::fill(dst + r1 * grid.width, dst + plane, 0.0f);
  }
}

void scatter_grid_columns(const Im2colGeometry& g, const PaddedGrid& grid, const float* stage,
                          int64_t rows, int64_t begin, int64_t end, float* out) {
  const int64_t width = end - begin, pixels = col_pixels(g);
  for (int64_t k = 0; k < rows; ++k) {
    const float* src = stage + k * width;
    float* dst = out + k * pixels;
    for (int64_t q = begin; q < end;) {
      const int64_t oh = q / grid.width, ow = q % grid.width;
      if (ow >= g.out_w) {
        q += grid.width - ow;
        continue;
      }
      const int64_t run = std::min(g.out_w - ow, end - q);
      std::memcpy(dst + oh * g.out_w + ow, src + (q - begin), static_cast<std::size_t>(run) * sizeof(float));
      q += run;
    }
  }
}

}  // namespace convlab::im2col
