#pragma once
// The order of operations of a cuda.winograd pass (which transform, which GEMM, which
// pointers, strides and leading dimensions, chunk by chunk; the derivation is at the top of
// lib/cpu/winograd/cpu_winograd.cpp) over any implementation of its steps: the GPU plan's
// (the kernels and cuBLAS) and the host emulation of the tests (the kernels' per-thread
// functions and a column-major GEMM loop), so the tests run the sequence the GPU runs.
// cpu.winograd runs the same steps, dealt to its threads chunk by chunk. CUDA-free.
//
// Ops provides:
//   filter(g, flip, w, u)                 U of group g (winograd_filter_row over all rows)
//   input(g, src, t0, count, v)           V of tiles [t0, t0 + count)
//   output(g, prod, t0, count, dst)       the destination tiles from M
//   gradient(g, dy, t0, count, prod)      P of the dy tiles (backward-filter)
//   filter_gradient(g, du, dw)            dw of group g from dU (backward-filter)
//   gemm(...)                             cublasSgemmStridedBatched_64's contract: column-
//                                         major, ops 'N'/'T', alpha = 1, C_i = op(A_i) op(B_i)
//                                         + beta C_i, X_i = X + i * stride_x; beta 0 reads no C
//
// GEMM mapping. A row-major matrix with leading dimension ld is the column-major transpose
// with the same ld, so per transform point xi (all alpha^2 points in one batched call):
//   forward, backward-data  M[xi] (Cd x T) = U[xi] (Cd x Cs) V[xi] (Cs x T)
//                           -> M^T = V^T U^T:   gemm(N, N, m=count, n=Cd, k=Cs,
//                                               V, ld chunk, U, ld Cs, M, ld chunk)
//   backward-filter         dU[xi] (Kg x Cg) += P[xi] (Kg x T) V[xi]^T (T x Cg)
//                           -> dU^T = V P^T:    gemm(T, N, m=Cg, n=Kg, k=count,
//                                               V, ld chunk, P, ld chunk, dU, ld Cg)
// with beta = 0 for a group's first chunk and 1 after (the chunks' sum in order: one stream,
// no atomics, deterministic). The batch strides are the layout's point strides (input_point,
// filter_point, product_point), the ones cpu.winograd's per-point GEMMs step by.

#include <cstdint>

#include "convlab/algorithm.hpp"
#include "strategy/winograd_geometry.hpp"

namespace convlab::cuda {

/// The buffers of a pass inside the workspace (winograd_geometry.hpp: worker 0's).
struct WinogradBuffers {
  float* u = nullptr;     ///< U, or dU for backward-filter
  float* v = nullptr;     ///< V of one chunk
  float* prod = nullptr;  ///< M, or P for backward-filter
};

inline WinogradBuffers winograd_buffers(const winograd::WinogradLayout& l, void* workspace) {
  char* base = static_cast<char*>(workspace);
  return {reinterpret_cast<float*>(base + l.filter_offset),
          reinterpret_cast<float*>(base + winograd::winograd_input_offset(l, 0)),
          reinterpret_cast<float*>(base + winograd::winograd_product_offset(l, 0))};
}

template <class Ops>
void run_winograd_pass(const winograd::WinogradLayout& l, Pass pass, int64_t groups,
                       const Tensors& t, const WinogradBuffers& b, Ops& ops) {
  const int64_t points = int64_t{l.alpha} * l.alpha;
  const int64_t cs = l.src_channels, cd = l.dst_channels;
  for (int64_t g = 0; g < groups; ++g) {
    if (pass == Pass::backward_filter) {
      for (int64_t ci = 0; ci < l.chunks; ++ci) {
        const int64_t t0 = ci * l.chunk, count = l.tiles - t0 < l.chunk ? l.tiles - t0 : l.chunk;
        ops.input(g, t.x, t0, count, b.v);
        ops.gradient(g, t.y, t0, count, b.prod);
        ops.gemm('T', 'N', cs, cd, count, b.v, l.chunk, l.input_point, b.prod, l.chunk,
                 l.product_point, ci == 0 ? 0.0f : 1.0f, b.u, cs, l.filter_point, points);
      }
      ops.filter_gradient(g, b.u, t.w);
      continue;
    }
    const bool data = pass == Pass::backward_data;
    const float* src = data ? t.y : t.x;
    float* dst = data ? t.x : t.y;
    ops.filter(g, data, t.w, b.u);
    for (int64_t ci = 0; ci < l.chunks; ++ci) {
      const int64_t t0 = ci * l.chunk, count = l.tiles - t0 < l.chunk ? l.tiles - t0 : l.chunk;
      ops.input(g, src, t0, count, b.v);
      ops.gemm('N', 'N', count, cd, cs, b.v, l.chunk, l.input_point, b.u, cs, l.filter_point, 0.0f,
               b.prod, l.chunk, l.product_point, points);
      ops.output(g, b.prod, t0, count, dst);
    }
  }
}

}  // namespace convlab::cuda
