#include "transpose.hpp"

namespace convlab::cpu_gemm {

void transpose(CpuIsa isa, int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
               int64_t ldd) {
  switch (isa) {
    case CpuIsa::avx512:
      return avx512::transpose(rows, cols, src, lds, dst, ldd);
    case CpuIsa::avx2:
      return avx2::transpose(rows, cols, src, lds, dst, ldd);
    case CpuIsa::generic:
      break;
  }
  generic::transpose(rows, cols, src, lds, dst, ldd);
}

}  // namespace convlab::cpu_gemm
