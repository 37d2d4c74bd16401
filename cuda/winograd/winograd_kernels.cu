// The kernels of cuda.winograd (winograd_kernels.hpp has the per-thread math): grid-stride
// loops in int64_t, one tile or one filter per thread and step, the tile size a template
// parameter so the shared transforms unroll into constants.
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/common/grid.hpp"
#include "winograd_kernels.hpp"

namespace convlab::cuda {
namespace {

using winograd::WinogradLayout;

#define CONVLAB_GRID_STRIDE(e, total)                                           \
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < (total); \
       e += int64_t(gridDim.x) * blockDim.x)

template <int M>
__global__ void filter_kernel(WinogradLayout l, bool flip, int64_t g, const float* __restrict__ w,
                              float* __restrict__ u) {
  CONVLAB_GRID_STRIDE(row, l.dst_channels * l.src_channels) {
    winograd_filter_row<M>(l, flip, g, w, row, u);
  }
}

template <int M>
__global__ void input_kernel(WinogradLayout l, int64_t g, const float* __restrict__ src, int64_t t0,
                             int64_t count, float* __restrict__ v) {
  CONVLAB_GRID_STRIDE(job, l.src_channels * count) {
    winograd_input_tile<M>(l, g, src, t0, count, job, v);
  }
}

template <int M>
__global__ void output_kernel(WinogradLayout l, int64_t g, const float* __restrict__ prod,
                              int64_t t0, int64_t count, float* __restrict__ dst) {
  CONVLAB_GRID_STRIDE(job, l.dst_channels * count) {
    winograd_output_tile<M>(l, g, prod, t0, count, job, dst);
  }
}

template <int M>
__global__ void gradient_kernel(WinogradLayout l, int64_t g, const float* __restrict__ dy,
                                int64_t t0, int64_t count, float* __restrict__ prod) {
  CONVLAB_GRID_STRIDE(job, l.dst_channels * count) {
    winograd_gradient_tile<M>(l, g, dy, t0, count, job, prod);
  }
}

template <int M>
__global__ void filter_gradient_kernel(WinogradLayout l, int64_t g, const float* __restrict__ du,
                                       float* __restrict__ dw) {
  CONVLAB_GRID_STRIDE(kc, l.dst_channels * l.src_channels) {
    winograd_filter_gradient<M>(l, g, du, kc, dw);
  }
}

// Launches kernel<2> or kernel<4> by the layout's variant, one thread per element.
#define CONVLAB_WINOGRAD_LAUNCH(kernel, elements, stream, ...)          \
  do {                                                                  \
    const auto launched = l.m == 2 ? kernel<2> : kernel<4>;             \
    launched<<<grid_for(elements), kThreads, 0, stream>>>(__VA_ARGS__); \
    CONVLAB_CUDA_CHECK_LAUNCH("winograd " #kernel);                     \
  } while (0)

}  // namespace

void launch_winograd_filter(const WinogradLayout& l, bool flip, int64_t g, const float* w, float* u,
                            CUstream_st* stream) {
  CONVLAB_WINOGRAD_LAUNCH(filter_kernel, l.dst_channels * l.src_channels, stream, l, flip, g, w, u);
}

void launch_winograd_input(const WinogradLayout& l, int64_t g, const float* src, int64_t t0,
                           int64_t count, float* v, CUstream_st* stream) {
  CONVLAB_WINOGRAD_LAUNCH(input_kernel, l.src_channels * count, stream, l, g, src, t0, count, v);
}

void launch_winograd_output(const WinogradLayout& l, int64_t g, const float* prod, int64_t t0,
                            int64_t count, float* dst, CUstream_st* stream) {
  CONVLAB_WINOGRAD_LAUNCH(output_kernel, l.dst_channels * count, stream, l, g, prod, t0, count,
                          dst);
}

void launch_winograd_gradient(const WinogradLayout& l, int64_t g, const float* dy, int64_t t0,
                              int64_t count, float* prod, CUstream_st* stream) {
  CONVLAB_WINOGRAD_LAUNCH(gradient_kernel, l.dst_channels * count, stream, l, g, dy, t0, count,
                          prod);
}

void launch_winograd_filter_gradient(const WinogradLayout& l, int64_t g, const float* du, float* dw,
                                     CUstream_st* stream) {
  CONVLAB_WINOGRAD_LAUNCH(filter_gradient_kernel, l.dst_channels * l.src_channels, stream, l, g, du,
                          dw);
}

}  // namespace convlab::cuda
