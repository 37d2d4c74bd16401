#pragma once
// The CPU reference convolution: direct loops over every output element, products summed in
// double, every valid problem (stride, padding, dilation, groups, asymmetric sizes).
// Written to be obviously right, not fast. Pointers are host memory, NCHW / KCRS, dense.

#include <cstdint>

#include "convlab/error.hpp"
#include "convlab/problem.hpp"

namespace convlab::reference {

/// y[n,k,oh,ow] = sum_{c in group(k), r, s} x[n,c, oh*sh - ph + r*dh, ow*sw - pw + s*dw] *
///                w[k, c - group_start, r, s]   (out-of-range x taps read as zero)
void forward(const ConvProblem& p, const float* x, const float* w, float* y);
/// dx[n,c,ih,iw] = sum of dy[n,k,oh,ow] * w[k,c',r,s] over every (k, r, s, oh, ow) whose
/// forward tap at (oh, ow, r, s) reads x[n,c,ih,iw]  (the adjoint of forward in x)
void backward_data(const ConvProblem& p, const float* dy, const float* w, float* dx);
/// dw[k,c',r,s] = sum_{n,oh,ow} dy[n,k,oh,ow] * x[n, c, oh*sh - ph + r*dh, ow*sw - pw + s*dw]
///                (the adjoint of forward in w)
void backward_filter(const ConvProblem& p, const float* x, const float* dy, float* dw);

/// One output element, exactly as the loops above sum it, left in double; with the sum of
/// the magnitudes |a||b| of its products (the A_i of the elementwise error bound). For a
/// check of a few sampled outputs of a layer too large to recompute whole.
struct Point {
  double value = 0.0;
  double magnitude = 0.0;
};
/// y at flat NCHW `index` (n, k, oh, ow). Throws Error{invalid_argument} for an index outside y.
Point forward_at(const ConvProblem& p, const float* x, const float* w, int64_t index);
/// dx at flat NCHW `index` (n, c, ih, iw).
Point backward_data_at(const ConvProblem& p, const float* dy, const float* w, int64_t index);
/// dw at flat KCRS `index` (k, c', r, s).
Point backward_filter_at(const ConvProblem& p, const float* x, const float* dy, int64_t index);

}  // namespace convlab::reference
