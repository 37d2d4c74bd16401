#include "unpacked_sgemm.hpp"

namespace convlab::cpu_gemm {

void unpacked_sgemm(CpuIsa isa, bool trans_a, int64_t m, int64_t n, int64_t k, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                    const int64_t* a_index, const int64_t* b_index, const BLanes* b_lanes,
                    bool stream_a) {
  switch (isa) {
    case CpuIsa::avx512:
      return avx512::unpacked_sgemm(trans_a, m, n, k, a, lda, b, ldb, beta, c, ldc, a_index,
                                    b_index, b_lanes, stream_a);
    case CpuIsa::avx2:
      return avx2::unpacked_sgemm(trans_a, m, n, k, a, lda, b, ldb, beta, c, ldc, a_index, b_index,
                                  b_lanes, stream_a);
    case CpuIsa::generic:
      break;
  }
  generic::unpacked_sgemm(trans_a, m, n, k, a, lda, b, ldb, beta, c, ldc, a_index, b_index, b_lanes,
                          stream_a);
}

bool unpacked_sgemm_native_lane_loads(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512:
      return avx512::native_lane_loads();
    case CpuIsa::avx2:
      return avx2::native_lane_loads();
    case CpuIsa::generic:
      break;
  }
  return generic::native_lane_loads();
}

}  // namespace convlab::cpu_gemm
