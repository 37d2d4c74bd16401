#pragma once
// The CPU reference convolution: direct loops over every output element, products summed in
// double, every valid problem (stride, padding, dilation, groups, asymmetric sizes).
// Written to be obviously right, not fast. Pointers are host memory, NCHW / KCRS, dense.

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

}  // namespace convlab::reference
