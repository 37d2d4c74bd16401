#include "reference.hpp"

#include <cmath>
#include <unsupported/Eigen/CXX11/Tensor>

namespace convlab::reference {
namespace {

using Index = Eigen::Index;
template <typename T>
using Tensor4 = Eigen::TensorMap<Eigen::Tensor<T, 4, Eigen::RowMajor, Index>>;

// The forward tap (oh, r) reads input row oh*stride - pad + r*dilation. The end paddings
// enter only through out_h/out_w: a tap past the last input row reads a zero.
inline int64_t tap(int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return out * stride - pad + kernel * dilation;
}

// One output element is one sum; the whole-tensor loops and the single-point queries share
// it. With Magnitude, the sum of |a||b| over the same products comes along (the elementwise
// error bound's A_i); without, the compiler drops it.
template <bool Magnitude>
struct Sum {
  double value = 0.0, magnitude = 0.0;
  void add(float a, float b) {
    const double product = double(a) * double(b);
    value += product;
    if (Magnitude) magnitude += std::fabs(product);
  }
};

template <bool Magnitude>
Sum<Magnitude> forward_sum(const ConvProblem& p, const Tensor4<const float>& x,
                           const Tensor4<const float>& w, int64_t n, int64_t k, int64_t oh,
                           int64_t ow) {
  const int64_t cpg = p.c_per_group(), c0 = (k / p.k_per_group()) * cpg;
  Sum<Magnitude> sum;
  for (int64_t c = 0; c < cpg; ++c)
    for (int64_t r = 0; r < p.r; ++r) {
      const int64_t ih = tap(oh, r, p.stride_h, p.pad_h, p.dilation_h);
      if (ih < 0 || ih >= p.h) continue;
      for (int64_t s = 0; s < p.s; ++s) {
        const int64_t iw = tap(ow, s, p.stride_w, p.pad_w, p.dilation_w);
        if (iw < 0 || iw >= p.w) continue;
        sum.add(x(n, c0 + c, ih, iw), w(k, c, r, s));
      }
    }
  return sum;
}

template <bool Magnitude>
Sum<Magnitude> backward_data_sum(const ConvProblem& p, const Tensor4<const float>& dy,
                                 const Tensor4<const float>& w, int64_t n, int64_t c, int64_t ih,
                                 int64_t iw) {
  const int64_t oh_n = p.out_h(), ow_n = p.out_w(), cpg = p.c_per_group(), kpg = p.k_per_group();
  const int64_t g = c / cpg, cg = c % cpg;
  Sum<Magnitude> sum;
  // Every (oh, r) with tap(oh, r) == ih: oh*stride = ih + pad - r*dilation.
  for (int64_t r = 0; r < p.r; ++r) {
    const int64_t th = ih + p.pad_h - r * p.dilation_h;
    if (th < 0 || th % p.stride_h != 0 || th / p.stride_h >= oh_n) continue;
    const int64_t oh = th / p.stride_h;
    for (int64_t s = 0; s < p.s; ++s) {
      const int64_t tw = iw + p.pad_w - s * p.dilation_w;
      if (tw < 0 || tw % p.stride_w != 0 || tw / p.stride_w >= ow_n) continue;
      const int64_t ow = tw / p.stride_w;
      for (int64_t k = g * kpg; k < (g + 1) * kpg; ++k) sum.add(dy(n, k, oh, ow), w(k, cg, r, s));
    }
  }
  return sum;
}

template <bool Magnitude>
Sum<Magnitude> backward_filter_sum(const ConvProblem& p, const Tensor4<const float>& x,
                                   const Tensor4<const float>& dy, int64_t k, int64_t c, int64_t r,
                                   int64_t s) {
  const int64_t oh_n = p.out_h(), ow_n = p.out_w();
  const int64_t c_abs = (k / p.k_per_group()) * p.c_per_group() + c;
  Sum<Magnitude> sum;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      const int64_t ih = tap(oh, r, p.stride_h, p.pad_h, p.dilation_h);
      if (ih < 0 || ih >= p.h) continue;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const int64_t iw = tap(ow, s, p.stride_w, p.pad_w, p.dilation_w);
        if (iw < 0 || iw >= p.w) continue;
        sum.add(dy(n, k, oh, ow), x(n, c_abs, ih, iw));
      }
    }
  return sum;
}

// The four NCHW / KCRS coordinates of flat `index` in a tensor of dims (d0, d1, d2, d3).
struct Coordinates {
  int64_t i0, i1, i2, i3;
};
Coordinates unflatten(int64_t index, int64_t d1, int64_t d2, int64_t d3) {
  return {index / (d1 * d2 * d3), index / (d2 * d3) % d1, index / d3 % d2, index % d3};
}

// The three tensors of a problem as NCHW / KCRS views (const for inputs, mutable for outputs).
template <typename T>
Tensor4<T> x_view(const ConvProblem& p, T* data) {
  return Tensor4<T>(data, p.n, p.c, p.h, p.w);
}
template <typename T>
Tensor4<T> w_view(const ConvProblem& p, T* data) {
  return Tensor4<T>(data, p.k, p.c_per_group(), p.r, p.s);
}
template <typename T>
Tensor4<T> y_view(const ConvProblem& p, T* data) {
  return Tensor4<T>(data, p.n, p.k, p.out_h(), p.out_w());
}

void check_index(int64_t index, int64_t elements, const char* tensor, const ConvProblem& p) {
  if (index < 0 || index >= elements) {
    throw Error(ErrorCode::invalid_argument,
                "reference: " + std::string(tensor) + " element " + std::to_string(index) +
                    " is outside 0.." + std::to_string(elements - 1) + " of " + p.descriptor());
  }
}

}  // namespace

void forward(const ConvProblem& p, const float* x_data, const float* w_data, float* y_data) {
  p.validate();
  const int64_t oh_n = p.out_h(), ow_n = p.out_w();
  const auto x = x_view(p, x_data);
  const auto w = w_view(p, w_data);
  auto y = y_view(p, y_data);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t k = 0; k < p.k; ++k)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          y(n, k, oh, ow) = static_cast<float>(forward_sum<false>(p, x, w, n, k, oh, ow).value);
        }
}

void backward_data(const ConvProblem& p, const float* dy_data, const float* w_data,
                   float* dx_data) {
  p.validate();
  const auto dy = y_view(p, dy_data);
  const auto w = w_view(p, w_data);
  auto dx = x_view(p, dx_data);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t ih = 0; ih < p.h; ++ih)
        for (int64_t iw = 0; iw < p.w; ++iw) {
          dx(n, c, ih, iw) =
              static_cast<float>(backward_data_sum<false>(p, dy, w, n, c, ih, iw).value);
        }
}

void backward_filter(const ConvProblem& p, const float* x_data, const float* dy_data,
                     float* dw_data) {
  p.validate();
  const int64_t cpg = p.c_per_group();
  const auto x = x_view(p, x_data);
  const auto dy = y_view(p, dy_data);
  auto dw = w_view(p, dw_data);
  for (int64_t k = 0; k < p.k; ++k)
    for (int64_t c = 0; c < cpg; ++c)
      for (int64_t r = 0; r < p.r; ++r)
        for (int64_t s = 0; s < p.s; ++s) {
          dw(k, c, r, s) =
              static_cast<float>(backward_filter_sum<false>(p, x, dy, k, c, r, s).value);
        }
}

Point forward_at(const ConvProblem& p, const float* x_data, const float* w_data, int64_t index) {
  p.validate();
  check_index(index, p.y_elems(), "y", p);
  const Coordinates at = unflatten(index, p.k, p.out_h(), p.out_w());
  const auto sum =
      forward_sum<true>(p, x_view(p, x_data), w_view(p, w_data), at.i0, at.i1, at.i2, at.i3);
  return {sum.value, sum.magnitude};
}

Point backward_data_at(const ConvProblem& p, const float* dy_data, const float* w_data,
                       int64_t index) {
  p.validate();
  check_index(index, p.x_elems(), "dx", p);
  const Coordinates at = unflatten(index, p.c, p.h, p.w);
  const auto sum = backward_data_sum<true>(p, y_view(p, dy_data), w_view(p, w_data), at.i0,
                                           at.i1, at.i2, at.i3);
  return {sum.value, sum.magnitude};
}

Point backward_filter_at(const ConvProblem& p, const float* x_data, const float* dy_data,
                         int64_t index) {
  p.validate();
  check_index(index, p.w_elems(), "dw", p);
  const Coordinates at = unflatten(index, p.c_per_group(), p.r, p.s);
  const auto sum = backward_filter_sum<true>(p, x_view(p, x_data), y_view(p, dy_data), at.i0,
                                             at.i1, at.i2, at.i3);
  return {sum.value, sum.magnitude};
}

}  // namespace convlab::reference
