#pragma once
/// \file
/// Tap classes: how im2col can leave the padding out of the GEMM.
///
/// The column buffer of strategy/im2col_index.hpp holds every tap of every output pixel, so
/// its GEMM multiplies a zero for each tap that reads padding: 18 % of the work on a 7x7
/// image with a 3x3 pad-1 kernel, 9 % at 14x14. Which taps of output pixel (oh, ow) read
/// inside the image depends on oh and ow separately: the kernel rows i with
/// 0 <= oh*stride_h - pad_h + i*dilation_h < H form one range, the columns j another. So the
/// pixels fall into rectangles ("tap classes") whose taps are a rectangle [i0, i1) x [j0, j1),
/// and each class can run its own GEMM over its own taps only:
///
///   y[K/g, class pixels] = w[K/g, class taps] * col_class[class taps, class pixels]
///
/// where `class taps` are the rows (c, i, j) of the full column buffer with (i, j) in the
/// class's rectangle, in the same order; the GEMM reads those columns of w through an index
/// list (tap_class_rows), so the filter is never copied.
///
/// Exact classes would cut a 3x3 pad-1 image into 9 (interior, 4 edges, 4 corners), and the
/// corners are one pixel per image: GEMMs too narrow to run well. So the classes are coarser:
/// the output rows split into runs with one row tap range each, the longest run being the
/// interior band. Every other run becomes one class across the full width, its column taps
/// the hull of all columns' ranges (the corners' few padding taps stay in, as zeros); the
/// interior band splits by column runs. A 3x3 pad-1 image gives 5 classes: top row, left
/// edge, interior, right edge, bottom row. A class's tap range may be wider than what some of
/// its pixels read (the hull): its column buffer then holds zeros there, as the full one
/// would, so the classes are exact whatever the geometry; they only save less.
///
/// Host-side math, shared by every executor and tested on the CPU
/// (tests/cpu/test_im2col_tap_classes.cpp).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "convlab/error.hpp"
#include "convlab/problem.hpp"
#include "strategy/im2col_index.hpp"

namespace convlab {

/// The taps [begin, end) of one dimension through which output `out` reads inside
/// [0, in_size): 0 <= out*stride - pad + tap*dilation < in_size, tap < kernel. Empty
/// (begin == end) when every tap reads padding.
inline OutputRange valid_taps(int64_t out, int64_t in_size, int64_t kernel, int64_t pad,
                              int64_t stride, int64_t dilation) {
  const int64_t base = out * stride - pad;  // the input coordinate of tap 0
  const int64_t begin = std::clamp<int64_t>(-floor_div(base, dilation), 0, kernel);
  const int64_t end = std::clamp<int64_t>(floor_div(in_size - 1 - base, dilation) + 1, 0, kernel);
  OutputRange range;
  range.begin = begin;
  range.end = std::max(begin, end);
  return range;
}

/// A run of consecutive outputs [outputs.begin, outputs.end) of one dimension that all read
/// inside the input through the same taps.
struct TapRun {
  OutputRange outputs;
  OutputRange taps;
};

/// The outputs [0, out_size) of one dimension cut into maximal runs of equal valid_taps, in
/// order.
inline std::vector<TapRun> tap_runs(int64_t out_size, int64_t in_size, int64_t kernel, int64_t pad,
                                    int64_t stride, int64_t dilation) {
  std::vector<TapRun> runs;
  for (int64_t o = 0; o < out_size; ++o) {
    const OutputRange taps = valid_taps(o, in_size, kernel, pad, stride, dilation);
    if (!runs.empty() && runs.back().taps.begin == taps.begin && runs.back().taps.end == taps.end) {
      runs.back().outputs.end = o + 1;
    } else {
      TapRun run;
      run.outputs.begin = o;
      run.outputs.end = o + 1;
      run.taps = taps;
      runs.push_back(run);
    }
  }
  return runs;
}

/// One class: the output pixels rows x cols of every image, and the taps taps_h x taps_w its
/// GEMM multiplies (every tap through which one of its pixels reads inside the image).
struct TapClass {
  OutputRange rows;
  OutputRange cols;
  OutputRange taps_h;
  OutputRange taps_w;
};

inline int64_t range_size(const OutputRange& r) { return r.end - r.begin; }
/// Output pixels of one image in the class.
inline int64_t class_pixels(const TapClass& c) { return range_size(c.rows) * range_size(c.cols); }
/// Kernel taps (i, j) the class multiplies; its column buffer has C/g times as many rows.
inline int64_t class_taps(const TapClass& c) { return range_size(c.taps_h) * range_size(c.taps_w); }

/// How a geometry's pixels are cut into classes. `merged` (see the file comment) keeps the
/// classes few and wide, at the price of a few padding taps at the corners, multiplied by
/// stored zeros. `exact` cuts every row run by every column run, so that each class
/// multiplies exactly the taps that read inside the image: where the filter, not the
/// image, is the other operand of those zeros (backward-data as a forward convolution of dy)
/// and they are zeros the problem's own padding does not hold, a NaN or Inf in the filter
/// must not reach an output through them.
enum class ClassCut { merged, exact };

/// The tap classes of a geometry (see the file comment), in output-row order; together they
/// cover every output pixel exactly once.
inline std::vector<TapClass> tap_classes(const Im2colGeometry& g, ClassCut cut = ClassCut::merged) {
  const std::vector<TapRun> rows =
      tap_runs(g.out_h, g.in_h, g.kernel_h, g.pad_h, g.stride_h, g.dilation_h);
  const std::vector<TapRun> cols =
      tap_runs(g.out_w, g.in_w, g.kernel_w, g.pad_w, g.stride_w, g.dilation_w);
  auto longest = [](const std::vector<TapRun>& runs) {
    return std::max_element(runs.begin(), runs.end(),
                            [](const TapRun& a, const TapRun& b) {
                              return range_size(a.outputs) < range_size(b.outputs);
                            }) -
           runs.begin();
  };
  // The hull of every column's taps, for the classes that span the full width.
  OutputRange hull_w;
  bool any = false;
  for (const TapRun& run : cols) {
    if (run.taps.begin == run.taps.end) continue;
    hull_w.begin = any ? std::min(hull_w.begin, run.taps.begin) : run.taps.begin;
    hull_w.end = any ? std::max(hull_w.end, run.taps.end) : run.taps.end;
    any = true;
  }
  OutputRange all_cols;
  all_cols.end = g.out_w;
  std::vector<TapClass> classes;
  if (rows.empty() || cols.empty()) return classes;
  const int64_t band = longest(rows);
  for (int64_t r = 0; r < static_cast<int64_t>(rows.size()); ++r) {
    if (r != band && cut == ClassCut::merged) {
      classes.push_back({rows[r].outputs, all_cols, rows[r].taps, hull_w});
      continue;
    }
    for (const TapRun& col : cols) {
      classes.push_back({rows[r].outputs, col.outputs, rows[r].taps, col.taps});
    }
  }
  return classes;
}

/// Writes the C/g * class_taps rows of the full column buffer (col_row(c, i, j)) that a class
/// multiplies, in its column buffer's order: c, then i in taps_h, then j in taps_w. They
/// index the columns of the filter matrix w[K/g, C/g*R*S] for the class's GEMM.
inline void tap_class_rows(const Im2colGeometry& g, const TapClass& tc, int64_t* rows) {
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = tc.taps_h.begin; i < tc.taps_h.end; ++i) {
      for (int64_t j = tc.taps_w.begin; j < tc.taps_w.end; ++j) *rows++ = col_row(g, c, i, j);
    }
  }
}

/// Backward-data with stride 1 is the forward convolution of dy by the flipped, transposed
/// filter: dx[c, ih, iw] = sum over k, i', j' of w[k, c, R-1-i', S-1-j'] *
/// dy[k, ih - pad' + i'*dh, iw - pad' + j'*dw], pad' = dh*(R-1) - pad_h (likewise w), read as
/// zero outside dy. This is that convolution's geometry (dy is its input, of K/g channels; dx
/// its output; a negative pad' only means its first taps never reach dy), so that
/// backward-data can run the forward tap classes: each dx pixel then sums its in-image taps in
/// one dot product, with no col2im and nothing added twice. Host only.
inline Im2colGeometry transposed_geometry(const ConvProblem& p) {
  p.validate();
  if (p.stride_h != 1 || p.stride_w != 1) {
    throw Error(ErrorCode::invalid_argument,
                "transposed im2col geometry of " + p.descriptor() + ": stride " +
                    std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) +
                    ", expected 1x1 (a strided backward-data is no forward convolution of dy)");
  }
  Im2colGeometry g;
  g.channels = p.k_per_group();
  g.in_h = p.out_h();
  g.in_w = p.out_w();
  g.kernel_h = p.r;
  g.kernel_w = p.s;
  g.pad_h = p.dilation_h * (p.r - 1) - p.pad_h;
  g.pad_w = p.dilation_w * (p.s - 1) - p.pad_w;
  g.dilation_h = p.dilation_h;
  g.dilation_w = p.dilation_w;
  g.out_h = p.h;
  g.out_w = p.w;
  g.image_stride = p.k * g.in_h * g.in_w;
  return g;
}

/// The transposed convolution's filter: w'[c, k, i', j'] = w[k, c, R-1-i', S-1-j'] (one
/// group), a forward filter of K/g input channels for transposed_geometry. Each (k, c) block
/// of R*S taps is the original's reversed. `flipped` holds the groups one after another, as w.
inline void flip_filter_rows(const ConvProblem& p, const float* w, int64_t first_row,
                             int64_t end_row, float* flipped) {
  const int64_t cg = p.c_per_group(), kg = p.k_per_group(), taps = p.r * p.s;
  for (int64_t row = first_row; row < end_row; ++row) {  // row = group * K/g + k
    const int64_t g = row / kg, k = row % kg;
    for (int64_t c = 0; c < cg; ++c) {
      const float* src = w + (row * cg + c) * taps;
      float* dst = flipped + ((g * cg + c) * kg + k) * taps;
      for (int64_t e = 0; e < taps; ++e) dst[e] = src[taps - 1 - e];
    }
  }
}

/// The transposed convolution's filter read in place: where tap_class_rows gives a class's
/// columns (k, i', j') of the flipped filter w' (`transposed`, K/g input channels), this gives
/// where w holds them relative to input channel c's taps: w'[c, k, i', j'] = w[k, c, R-1-i',
/// S-1-j'] sits at c*R*S + offsets[l] of one group of w, so a GEMM reading w's rows of R*S
/// floats through these offsets multiplies exactly what it would from the flipped copy.
inline void flipped_tap_offsets(const ConvProblem& p, const Im2colGeometry& transposed,
                                const TapClass& tc, int64_t* offsets) {
  const int64_t taps = p.r * p.s, row = p.c_per_group() * taps;
  for (int64_t k = 0; k < transposed.channels; ++k) {
    for (int64_t i = tc.taps_h.begin; i < tc.taps_h.end; ++i) {
      for (int64_t j = tc.taps_w.begin; j < tc.taps_w.end; ++j) {
        *offsets++ = k * row + (p.r - 1 - i) * p.s + (p.s - 1 - j);
      }
    }
  }
}

/// Products the classes multiply per image and channel, sum of class_pixels * class_taps,
/// against OH*OW*R*S for the full column buffer.
inline int64_t tap_class_products(const std::vector<TapClass>& classes) {
  int64_t products = 0;
  for (const TapClass& c : classes) products += class_pixels(c) * class_taps(c);
  return products;
}

/// The (pixel, tap) pairs of one image and channel that read inside the image: the products
/// a convolution cannot skip.
inline int64_t in_image_products(const Im2colGeometry& g) {
  int64_t rows = 0, cols = 0;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    rows += range_size(valid_taps(oh, g.in_h, g.kernel_h, g.pad_h, g.stride_h, g.dilation_h));
  }
  for (int64_t ow = 0; ow < g.out_w; ++ow) {
    cols += range_size(valid_taps(ow, g.in_w, g.kernel_w, g.pad_w, g.stride_w, g.dilation_w));
  }
  return rows * cols;
}

}  // namespace convlab
