#include "im2col_passes.hpp"

#include <algorithm>

namespace convlab::cuda {
namespace {

// One pass of one problem: the sizes of the derivation in cuda_im2col.cpp.
struct PassRunner {
  const ConvProblem& p;
  const CudaIm2colLayout& l;
  float* col;
  float* stage;
  Im2colOps& ops;
  Im2colGeometry full;  // b images; a chunk of m < b images differs only in `images`

  int64_t cg() const { return p.c_per_group(); }
  int64_t kg() const { return p.k_per_group(); }
  int64_t P() const { return p.out_h() * p.out_w(); }
  int64_t L() const { return cg() * p.r * p.s; }
  int64_t image_x() const { return p.c * p.h * p.w; }
  int64_t image_y() const { return p.k * P(); }
  int64_t first(int64_t chunk) const { return chunk * l.images; }
  int64_t count(int64_t chunk) const { return std::min(l.images, p.n - first(chunk)); }
  Im2colGeometry geometry(int64_t images) const {
    Im2colGeometry g = full;
    g.images = images;
    return g;
  }

  // The loop of both data passes: per group its filters, then the 1x1 shortcut over every
  // image at once, or per chunk of images the chunk's first image, size and geometry.
  template <typename Pointwise, typename Chunk>
  void each_group_and_chunk(const float* w, const Pointwise& pointwise, const Chunk& chunk_step) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const float* w_g = w + g * kg() * L();
      if (l.pointwise) {
        pointwise(g, w_g);
        continue;
      }
      for (int64_t chunk = 0; chunk < l.chunks; ++chunk) {
        const int64_t m = count(chunk);
        chunk_step(g, w_g, first(chunk), m, geometry(m));
      }
    }
  }

  void forward(const float* x, const float* w, float* y) {
    each_group_and_chunk(
        w,
        [&](int64_t g, const float* w_g) {  // col_m = x_m: one batched GEMM over every image
          ops.gemm('N', 'N', P(), kg(), L(), x + g * cg() * P(), P(), image_x(), w_g, L(), 0, 0.0f,
                   y + g * kg() * P(), P(), image_y(), p.n);
        },
        [&](int64_t g, const float* w_g, int64_t n0, int64_t m, const Im2colGeometry& geo) {
          ops.im2col(geo, x + n0 * image_x() + group_offset(geo, g), col);
          ops.gemm('N', 'N', P(), kg(), L(), col, m * P(), P(), w_g, L(), 0, 0.0f,
                   y + n0 * image_y() + g * kg() * P(), P(), image_y(), m);
        });
  }

  void backward_data(const float* dy, const float* w, float* dx) {
    each_group_and_chunk(
        w,
        [&](int64_t g, const float* w_g) {  // dx_m = W^T dY_m written in place
          ops.gemm('N', 'T', P(), L(), kg(), dy + g * kg() * P(), P(), image_y(), w_g, L(), 0, 0.0f,
                   dx + g * cg() * P(), P(), image_x(), p.n);
        },
        [&](int64_t g, const float* w_g, int64_t n0, int64_t m, const Im2colGeometry& geo) {
          ops.gemm('N', 'T', P(), L(), kg(), dy + n0 * image_y() + g * kg() * P(), P(), image_y(),
                   w_g, L(), 0, 0.0f, col, m * P(), P(), m);
          ops.col2im(geo, col, dx + n0 * image_x() + group_offset(geo, g));
        });
  }

  void backward_filter(const float* x, const float* dy, float* dw) {
    for (int64_t g = 0; g < p.groups; ++g) {
      float* dw_g = dw + g * kg() * L();
      for (int64_t chunk = 0; chunk < l.chunks; ++chunk) {
        const int64_t n0 = first(chunk), m = count(chunk);
        const float* dy_chunk = dy + n0 * image_y() + g * kg() * P();
        const float* a = col;
        if (l.pointwise) {
          a = x + n0 * image_x() + g * cg() * P();  // b = 1: col = x_n in place
        } else {
          const Im2colGeometry geo = geometry(m);
          ops.im2col(geo, x + n0 * image_x() + group_offset(geo, g), col);
        }
        const float* b = dy_chunk;
        if (m > 1) {
          ops.stage(dy_chunk, image_y(), m, kg(), P(), stage);
          b = stage;
        }
        ops.gemm('T', 'N', L(), kg(), m * P(), a, m * P(), 0, b, m * P(), 0,
                 chunk == 0 ? 0.0f : 1.0f, dw_g, L(), 0, 1);
      }
    }
  }
};

}  // namespace

void run_im2col_pass(const ConvProblem& p, Pass pass, const CudaIm2colLayout& layout,
                     const Tensors& t, float* col, float* stage, Im2colOps& ops) {
  PassRunner run{p, layout, col, stage, ops, make_im2col_geometry(p, layout.images)};
  switch (pass) {
    case Pass::forward:
      run.forward(t.x, t.w, t.y);
      break;
    case Pass::backward_data:
      run.backward_data(t.y, t.w, t.x);
      break;
    case Pass::backward_filter:
      run.backward_filter(t.x, t.y, t.w);
      break;
  }
}

}  // namespace convlab::cuda
