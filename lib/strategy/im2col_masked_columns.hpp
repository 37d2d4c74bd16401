#pragma once
/// \file
/// The masked column buffer of a stride-1 convolution whose output rows are as wide as its
/// input rows (OW = W: "same" padding across): each of its rows is a run of the input image
/// itself, unpadded, with the taps that fall in the padding masked off, so a GEMM can read the
/// rows in x and write y in place, with no copy of either and no extra columns.
///
/// Output pixel q = oh*OW + ow reads tap (c, i, j) at x[c, oh + i*dh - ph, ow + j*dw - pw],
/// whose offset in the group's planes is c*H*W + (oh + i*dh - ph)*W + ow + j*dw - pw. With
/// OW = W that is q + tap_offset(c, i, j),
///
///   col[(c*R + i)*S + j, q] = x[tap_offset(c, i, j) + q]  where the tap reads inside x,
///                             0                          where it reads the padding,
///   tap_offset(c, i, j) = c*H*W + (i*dh - ph)*W + (j*dw - pw),
///
/// the column buffer of strategy/im2col_index.hpp, column for column. Which taps read inside
/// depends on the tap (i, j) and the pixel only, not the channel: one bit per (tap, pixel)
/// says so (`masked_lane_bits`), 16 pixels to a 16-bit word, each tap's bits a row of words.
/// A GEMM reads row l's column q at x + tap_offset + q where the bit of (l's tap, q) is set and
/// takes zero where it is clear; the padding's addresses are never read (they are another
/// row's or channel's floats, or outside x). The values are the column buffer's, zeros
/// included, and so are the products; the order of their sums is below.
///
/// Against the padded grid (strategy/im2col_padded_grid.hpp): no padded copy of the image,
/// no extra columns between output rows, and the GEMM's columns are y's, so no stage.
///
/// The depth order. A GEMM that loads a row's lane bits at every step of its sum pays for them
/// at every step; so the masked GEMM sums the column buffer's rows in blocks of `block` input
/// channels, within a block tap by tap, within a tap channel by channel
/// (masked_depth_row): `block` steps in a row share their bits, and a block's rows still read
/// a few channels' planes around the same pixels, as the column buffer's order does. The
/// filter's columns go in the same order (masked_filter_rows). The sums are the column
/// buffer's products in another order: exact where they are exact, not its bits.

#include <cstdint>

#include "strategy/hd.hpp"
#include "strategy/im2col_index.hpp"

namespace convlab {

/// Pixels per word of the lane bits.
inline constexpr int64_t kMaskedLaneWordBits = 16;

/// Whether the convolution has the masked form: stride 1 in both directions and output rows
/// as wide as the input's (OW = W), so that neighbouring outputs read neighbouring inputs
/// across the ends of the rows too.
CONVLAB_HD bool has_masked_columns(const Im2colGeometry& g) {
  return g.stride_h == 1 && g.stride_w == 1 && g.out_w == g.in_w && g.out_h > 0 && g.out_w > 0;
}

/// Where column-buffer row (c*R + i)*S + j starts, relative to the group's first input
/// element: c*H*W + (i*dh - ph)*W + j*dw - pw (negative where the row starts in the padding).
CONVLAB_HD int64_t masked_tap_offset(const Im2colGeometry& g, int64_t row) {
  const int64_t j = row % g.kernel_w, i = row / g.kernel_w % g.kernel_h;
  const int64_t c = row / (g.kernel_w * g.kernel_h);
  return c * plane_elems(g) + (i * g.dilation_h - g.pad_h) * g.in_w + j * g.dilation_w - g.pad_w;
}

/// Words of lane bits per tap: ceil(OH*OW / 16).
CONVLAB_HD int64_t masked_lane_words(const Im2colGeometry& g) {
  return (col_pixels(g) + kMaskedLaneWordBits - 1) / kMaskedLaneWordBits;
}

/// Where row `row`'s tap has its lane bits: (i*S + j) * masked_lane_words.
CONVLAB_HD int64_t masked_lane_row(const Im2colGeometry& g, int64_t row) {
  return row % (g.kernel_h * g.kernel_w) * masked_lane_words(g);
}

/// The lane bits of every tap, R*S rows of masked_lane_words(g) words into `bits`: bit q % 16
/// of word q / 16 of tap (i, j) is set where output pixel q reads that tap inside x. The bits
/// past the last pixel are clear.
CONVLAB_HD void masked_lane_bits(const Im2colGeometry& g, uint16_t* bits) {
  const int64_t words = masked_lane_words(g);
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      uint16_t* row = bits + (i * g.kernel_w + j) * words;
      for (int64_t w = 0; w < words; ++w) row[w] = 0;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const int64_t ih = oh + i * g.dilation_h - g.pad_h;
        if (ih < 0 || ih >= g.in_h) continue;
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const int64_t iw = ow + j * g.dilation_w - g.pad_w;
          if (iw < 0 || iw >= g.in_w) continue;
          const int64_t q = oh * g.out_w + ow;
          row[q / kMaskedLaneWordBits] |= static_cast<uint16_t>(1u << (q % kMaskedLaneWordBits));
        }
      }
    }
  }
}

/// The column-buffer row (c*R + i)*S + j that step l of the masked depth order sums: blocks
/// of `block` channels (the last may be short), tap (i, j) by tap within a block, channel by
/// channel within a tap.
CONVLAB_HD int64_t masked_depth_row(const Im2colGeometry& g, int64_t block, int64_t l) {
  const int64_t taps = g.kernel_h * g.kernel_w;
  const int64_t first = l / (block * taps) * block;  // the block's first channel
  const int64_t channels = g.channels - first < block ? g.channels - first : block;
  const int64_t within = l - first * taps;
  return (first + within % channels) * taps + within / channels;
}

/// Rows [first_row, end_row) of the filter a masked GEMM reads, each row's C/g*R*S columns in
/// the masked depth order of `g` with channel blocks of `block`: row (group, m) of groups x M
/// rows. Forward (`transposed` false): M = K/g, the row is w's row (group, k). The transposed
/// backward-data (g its geometry: dy's K/g channels the input): M = C/g, the row is the flipped
/// filter's, w'[c, k, i', j'] = w[k, c, R-1-i', S-1-j'] (strategy/im2col_tap_classes.hpp).
inline void masked_filter_rows(const ConvProblem& p, const Im2colGeometry& g, bool transposed,
                               int64_t block, const float* w, int64_t first_row, int64_t end_row,
                               float* out) {
  const int64_t taps = p.r * p.s, cg = p.c_per_group(), kg = p.k_per_group();
  const int64_t rows = g.channels * taps;  // columns of a row of the GEMM's filter
  const int64_t m = transposed ? cg : kg;
  for (int64_t row = first_row; row < end_row; ++row) {
    const int64_t group = row / m, r = row % m;
    float* dst = out + row * rows;
    for (int64_t first = 0; first < g.channels; first += block) {
      const int64_t end = first + block < g.channels ? first + block : g.channels;
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t c = first; c < end; ++c) {
          // Forward: w[group*K/g + r, c, t]; transposed: w[group*K/g + c, r, taps-1-t].
          *dst++ = transposed ? w[((group * kg + c) * cg + r) * taps + taps - 1 - t]
                              : w[((group * kg + r) * cg + c) * taps + t];
        }
      }
    }
  }
}

}  // namespace convlab
