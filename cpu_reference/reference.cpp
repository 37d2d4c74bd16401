#include "reference.hpp"

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

}  // namespace

void forward(const ConvProblem& p, const float* x_data, const float* w_data, float* y_data) {
  p.validate();
  const int64_t oh_n = p.out_h(), ow_n = p.out_w(), cpg = p.c_per_group(), kpg = p.k_per_group();
  Tensor4<const float> x(x_data, p.n, p.c, p.h, p.w);
  Tensor4<const float> w(w_data, p.k, cpg, p.r, p.s);
  Tensor4<float> y(y_data, p.n, p.k, oh_n, ow_n);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t k = 0; k < p.k; ++k) {
      const int64_t c0 = (k / kpg) * cpg;
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          double sum = 0.0;
          for (int64_t c = 0; c < cpg; ++c)
            for (int64_t r = 0; r < p.r; ++r) {
              const int64_t ih = tap(oh, r, p.stride_h, p.pad_h, p.dilation_h);
              if (ih < 0 || ih >= p.h) continue;
              for (int64_t s = 0; s < p.s; ++s) {
                const int64_t iw = tap(ow, s, p.stride_w, p.pad_w, p.dilation_w);
                if (iw < 0 || iw >= p.w) continue;
                sum += double(x(n, c0 + c, ih, iw)) * double(w(k, c, r, s));
              }
            }
          y(n, k, oh, ow) = static_cast<float>(sum);
        }
    }
}

void backward_data(const ConvProblem& p, const float* dy_data, const float* w_data,
                   float* dx_data) {
  p.validate();
  const int64_t oh_n = p.out_h(), ow_n = p.out_w(), cpg = p.c_per_group(), kpg = p.k_per_group();
  Tensor4<const float> dy(dy_data, p.n, p.k, oh_n, ow_n);
  Tensor4<const float> w(w_data, p.k, cpg, p.r, p.s);
  Tensor4<float> dx(dx_data, p.n, p.c, p.h, p.w);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c) {
      const int64_t g = c / cpg, cg = c % cpg;
      for (int64_t ih = 0; ih < p.h; ++ih)
        for (int64_t iw = 0; iw < p.w; ++iw) {
          double sum = 0.0;
          // Every (oh, r) with tap(oh, r) == ih: oh*stride = ih + pad - r*dilation.
          for (int64_t r = 0; r < p.r; ++r) {
            const int64_t th = ih + p.pad_h - r * p.dilation_h;
            if (th < 0 || th % p.stride_h != 0 || th / p.stride_h >= oh_n) continue;
            const int64_t oh = th / p.stride_h;
            for (int64_t s = 0; s < p.s; ++s) {
              const int64_t tw = iw + p.pad_w - s * p.dilation_w;
              if (tw < 0 || tw % p.stride_w != 0 || tw / p.stride_w >= ow_n) continue;
              const int64_t ow = tw / p.stride_w;
              for (int64_t k = g * kpg; k < (g + 1) * kpg; ++k) {
                sum += double(dy(n, k, oh, ow)) * double(w(k, cg, r, s));
              }
            }
          }
          dx(n, c, ih, iw) = static_cast<float>(sum);
        }
    }
}

void backward_filter(const ConvProblem& p, const float* x_data, const float* dy_data,
                     float* dw_data) {
  p.validate();
  const int64_t oh_n = p.out_h(), ow_n = p.out_w(), cpg = p.c_per_group(), kpg = p.k_per_group();
  Tensor4<const float> x(x_data, p.n, p.c, p.h, p.w);
  Tensor4<const float> dy(dy_data, p.n, p.k, oh_n, ow_n);
  Tensor4<float> dw(dw_data, p.k, cpg, p.r, p.s);
  for (int64_t k = 0; k < p.k; ++k) {
    const int64_t c0 = (k / kpg) * cpg;
    for (int64_t c = 0; c < cpg; ++c)
      for (int64_t r = 0; r < p.r; ++r)
        for (int64_t s = 0; s < p.s; ++s) {
          double sum = 0.0;
          for (int64_t n = 0; n < p.n; ++n)
            for (int64_t oh = 0; oh < oh_n; ++oh) {
              const int64_t ih = tap(oh, r, p.stride_h, p.pad_h, p.dilation_h);
              if (ih < 0 || ih >= p.h) continue;
              for (int64_t ow = 0; ow < ow_n; ++ow) {
                const int64_t iw = tap(ow, s, p.stride_w, p.pad_w, p.dilation_w);
                if (iw < 0 || iw >= p.w) continue;
                sum += double(dy(n, k, oh, ow)) * double(x(n, c0 + c, ih, iw));
              }
            }
          dw(k, c, r, s) = static_cast<float>(sum);
        }
  }
}

}  // namespace convlab::reference
