#include "strided_rows.hpp"

namespace convlab::cpu_gemm {

void copy_rows(CpuIsa isa, const float* src, int64_t src_stride, int64_t rows, int64_t width,
               float* dst, int64_t dst_stride, const RowBlocks& blocks) {
  switch (isa) {
    case CpuIsa::avx512:
      return avx512::copy_rows(src, src_stride, rows, width, dst, dst_stride, blocks);
    case CpuIsa::avx2:
      return avx2::copy_rows(src, src_stride, rows, width, dst, dst_stride, blocks);
    case CpuIsa::generic:
      break;
  }
  generic::copy_rows(src, src_stride, rows, width, dst, dst_stride, blocks);
}

void add_rows(CpuIsa isa, const float* src, int64_t src_stride, int64_t rows, int64_t width,
              float* dst, int64_t dst_stride) {
  switch (isa) {
    case CpuIsa::avx512:
      return avx512::add_rows(src, src_stride, rows, width, dst, dst_stride);
    case CpuIsa::avx2:
      return avx2::add_rows(src, src_stride, rows, width, dst, dst_stride);
    case CpuIsa::generic:
      break;
  }
  generic::add_rows(src, src_stride, rows, width, dst, dst_stride);
}

}  // namespace convlab::cpu_gemm
