#pragma once
/// \file
/// The implicit column buffer of a stride-1 convolution: each of its rows is a run of one
/// padded input image, so a GEMM can read the rows there instead of from a copy.
///
/// Pad one group of one image into `grid`: grid[c, r, s] = x[c, r - pad_h, s - pad_w] (zero
/// outside x), Hp = OH + dh*(R-1) rows per channel, each Wp = OW + dw*(S-1) columns wide. Number
/// the output pixels by their place in that grid, q = oh*P + ow, where P is the grid's row
/// pitch. With stride 1, output (oh, ow) reads tap (c, i, j) at grid[c, oh + i*dh, ow + j*dw] =
/// grid + tap_offset(c, i, j) + q, so
///
///   col[(c*R + i)*S + j, q] = grid[tap_offset(c, i, j) + q],
///   tap_offset(c, i, j) = c*plane + i*dh*P + j*dw,
///
/// the column buffer of strategy/im2col_index.hpp with P - OW extra columns after each output
/// row (ow >= OW: they read the next row's start; their products are computed and dropped).
/// Its first grid_columns = (OH-1)*P + OW columns hold every output pixel, and every tap of
/// those reads inside the grid. The values are the column buffer's, zeros of the padding
/// included, so a GEMM over them sums each output's products exactly as over the column
/// buffer. A strided convolution's taps of neighbouring outputs are not neighbours in x: it
/// has no such form.
///
/// Neighbouring rows share their padding: a row's last `shared` columns, right padding, lie
/// where the next row's first `shared` ones, left padding, do, so the pitch is P = Wp - shared
/// and each plane ends in `shared` zeros for its last row. Both are zeros, so every read sees
/// the value it would in rows of their own, and the forward GEMM multiplies `shared` fewer
/// extra columns per output row: a 3x3 kernel padded by 1 has one extra column per row
/// instead of two (28 outputs a row over a pitch of 29, not 30). shared = min(pad_w, the right
/// padding the taps read, Wp - OW), none where either side is unpadded.
///
/// Backward-filter reads the column buffer the other way: its GEMM sums over the output
/// pixels, so each step of the sum is one column, and its rows are (c, i, j). Per tap (i, j),
/// col[(c*R + i)*S + j, l] = grid[c*plane + tap_offset(0, i, j) + pixel_offset(l)] for output
/// pixel l = (image m, oh, ow): one channel stride between the GEMM's rows and one offset per
/// column, with no extra columns and any stride. There the grid is as large as the taps of
/// the output pixels reach, Hp = (OH-1)*sh + dh*(R-1) + 1 rows of Wp = (OW-1)*sw + dw*(S-1) + 1
/// columns (the stride-1 sizes above when sh = sw = 1), its rows sharing their padding alike.

#include <cstdint>

#include "strategy/hd.hpp"
#include "strategy/im2col_index.hpp"

namespace convlab {

/// The padded image of one group and the output pixels' columns over it.
struct PaddedGrid {
  int64_t height = 0;   ///< Hp = OH + dh*(R-1)
  int64_t width = 0;    ///< the row pitch P = Wp - shared, Wp = OW + dw*(S-1)
  int64_t shared = 0;   ///< padding columns each row shares with the next
  int64_t plane = 0;    ///< floats per channel: Hp*P + shared
  int64_t columns = 0;  ///< (OH-1)*P + OW: the GEMM columns that cover every output pixel
};

/// Whether the convolution has the implicit form: stride 1 in both directions.
CONVLAB_HD bool has_padded_grid(const Im2colGeometry& g) {
  return g.stride_h == 1 && g.stride_w == 1;
}

/// The grid of a geometry: every input element a tap of an output pixel reads. `columns` is
/// the forward GEMM's and means something only with stride 1 (has_padded_grid).
CONVLAB_HD PaddedGrid padded_grid(const Im2colGeometry& g) {
  PaddedGrid grid;
  if (g.out_h <= 0 || g.out_w <= 0) return grid;
  grid.height = (g.out_h - 1) * g.stride_h + g.dilation_h * (g.kernel_h - 1) + 1;
  const int64_t full_width = (g.out_w - 1) * g.stride_w + g.dilation_w * (g.kernel_w - 1) + 1;
  // A shared column must be left padding of the next row (< pad_w), right padding of this one
  // (the taps read past x's last column) and, for the forward GEMM's columns, beyond OW.
  const int64_t right_pad = full_width - g.pad_w - g.in_w;
  const int64_t shared = g.pad_w < right_pad ? g.pad_w : right_pad;
  const int64_t beyond = full_width - g.out_w;
  grid.shared = shared < 0 ? 0 : (shared < beyond ? shared : beyond);
  grid.width = full_width - grid.shared;
  grid.plane = grid.height * grid.width + grid.shared;
  grid.columns = (g.out_h - 1) * grid.width + g.out_w;
  return grid;
}

/// Floats of one group's padded image: C/g * plane.
CONVLAB_HD int64_t padded_grid_elems(const Im2colGeometry& g, const PaddedGrid& grid) {
  return g.channels * grid.plane;
}

/// Where column-buffer row (c*R + i)*S + j starts in the grid.
CONVLAB_HD int64_t grid_tap_offset(const Im2colGeometry& g, const PaddedGrid& grid, int64_t row) {
  const int64_t j = row % g.kernel_w, i = row / g.kernel_w % g.kernel_h;
  const int64_t c = row / (g.kernel_w * g.kernel_h);
  return c * grid.plane + i * g.dilation_h * grid.width + j * g.dilation_w;
}

/// Where output pixel `pixel` (image * OH*OW + oh*OW + ow) of a run of images, each padded
/// into its own grid one after another, has its tap (0, 0) in that run: image * (C/g*plane) +
/// oh*sh*P + ow*sw. Backward-filter's GEMM reads column `pixel` of row (c, i, j) at
/// grid_tap_offset(g, grid, (c*R + i)*S + j) plus this.
CONVLAB_HD int64_t grid_pixel_offset(const Im2colGeometry& g, const PaddedGrid& grid,
                                     int64_t pixel) {
  const int64_t pixels = col_pixels(g);
  const int64_t image = pixel / pixels, oh = pixel % pixels / g.out_w, ow = pixel % g.out_w;
  return image * padded_grid_elems(g, grid) + oh * g.stride_h * grid.width + ow * g.stride_w;
}

/// grid_pixel_offset of the pixels [begin, begin + count) into out[0, count), walking the
/// output rows rather than dividing per pixel.
CONVLAB_HD void grid_pixel_offsets(const Im2colGeometry& g, const PaddedGrid& grid,
                                   int64_t begin, int64_t count, int64_t* out) {
  if (count <= 0 || g.out_w <= 0) return;
  const int64_t pixels = col_pixels(g), image_grid = padded_grid_elems(g, grid);
  int64_t image = begin / pixels, oh = begin % pixels / g.out_w, ow = begin % g.out_w;
  for (int64_t k = 0; k < count; ++k) {
    out[k] = image * image_grid + oh * g.stride_h * grid.width + ow * g.stride_w;
    if (++ow == g.out_w) {
      ow = 0;
      if (++oh == g.out_h) {
        oh = 0;
        ++image;
      }
    }
  }
}

/// The GEMM columns beyond the output pixels, as a share of them: (columns - OH*OW) / OH*OW.
CONVLAB_HD double grid_extra_share(const Im2colGeometry& g, const PaddedGrid& grid) {
  const int64_t pixels = col_pixels(g);
  return pixels > 0 ? static_cast<double>(grid.columns - pixels) / static_cast<double>(pixels)
                    : 0.0;
}

}  // namespace convlab
