#pragma once
// The CPU loops of cpu.im2col's tap classes (strategy/im2col_tap_classes.hpp): one class's
// column buffer and its adjoint, and the staging of a class's output pixels. Every loop
// covers one group of g.images images side by side, as im2col_loops.hpp does for the full
// column buffer. Their rows are a few floats wide; `isa` chooses the build of the row copies
// (cpu_gemm::copy_rows) and must be one this CPU runs.

#include "cpu/isa.hpp"
#include "strategy/im2col_index.hpp"
#include "strategy/im2col_tap_classes.hpp"

namespace convlab::im2col {

/// The column buffer of one tap class (strategy/im2col_tap_classes.hpp) for the g.images
/// images of one group starting at x_group: col[C/g * class_taps, images * class_pixels],
/// rows `ld` floats apart (ld >= images * class_pixels; the floats past a row's columns are
/// not written), row (c, i, j) over the class's taps in that order, column image *
/// class_pixels + (oh - rows.begin) * cols-width + (ow - cols.begin). Taps of the class that
/// read padding for some of its pixels (its hull) hold zeros there.
void im2col_class_cpu(const Im2colGeometry& g, const TapClass& tc, const float* x_group, float* col,
                      int64_t ld, CpuIsa isa);

/// The adjoint of im2col_class_cpu: adds each entry of a class's column buffer into the dx
/// element its forward tap read (padding entries are dropped). Classes are added in turn into
/// a dx that starts at zero; each sum's order is class by class, then tap by tap.
void col2im_class_add_cpu(const Im2colGeometry& g, const TapClass& tc, const float* col,
                          float* dx_group, CpuIsa isa);

/// The adjoint of reading a class's filter columns: for each of `rows` rows, adds
/// sums[row * channels * class_taps + (c, i, j)] into dw[row * dw_stride + c * R*S + i * S + j]
/// for c < channels and the class's taps (i, j) of an R x S filter (g.kernel_h x g.kernel_w),
/// dw pointing at the first channel's column. Backward-filter's class products land in a
/// panel and are added into dW this way: by runs of consecutive columns, not one indexed
/// column at a time (on a 7x7 image the edge classes' adds cost a fifth of the pass so).
void add_class_filter_columns(const Im2colGeometry& g, const TapClass& tc, int64_t channels,
                              const float* sums, int64_t rows, float* dw, int64_t dw_stride,
                              CpuIsa isa);

/// The class's pixels of `rows` planes of an NCHW tensor (planes at stride out_h*out_w, images
/// at stride channels_total*out_h*out_w) into dst[rows, images * class_pixels], in the column
/// order of im2col_class_cpu; g gives out_h, out_w and images.
void gather_class(const Im2colGeometry& g, const TapClass& tc, const float* src, int64_t rows,
                  int64_t channels_total, float* dst, CpuIsa isa);

/// The inverse of gather_class: writes the class's pixels of the NCHW tensor from src.
void scatter_class(const Im2colGeometry& g, const TapClass& tc, const float* src, int64_t rows,
                   int64_t channels_total, float* dst, CpuIsa isa);

}  // namespace convlab::im2col
