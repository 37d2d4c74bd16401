#pragma once
// cublasSgemmStridedBatched_64's contract on the host, for the tests that run a GPU plan's
// pass sequence without a GPU: column-major, ops 'N' or 'T', alpha = 1,
// C_i = op(A_i) op(B_i) + beta C_i for i < batch with X_i = X + i * stride_x; beta = 0 does
// not read C. Sums in double: the tests check pointers, strides and leading dimensions, not
// cuBLAS's rounding.

#include <cstdint>

namespace convlab::testing {

/// Column-major element (r, c) of op(X), X with leading dimension ld.
template <typename T>
T column_major_element(const T* x, char op, int64_t ld, int64_t r, int64_t c) {
  return op == 'N' ? x[r + c * ld] : x[c + r * ld];
}

inline void host_sgemm_strided_batched(char op_a, char op_b, int64_t m, int64_t n, int64_t k,
                                       const float* a, int64_t lda, int64_t stride_a,
                                       const float* b, int64_t ldb, int64_t stride_b, float beta,
                                       float* c, int64_t ldc, int64_t stride_c, int64_t batch) {
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) {
          sum += double(column_major_element(a + q * stride_a, op_a, lda, i, l)) *
                 column_major_element(b + q * stride_b, op_b, ldb, l, j);
        }
        float& out = c[q * stride_c + i + j * ldc];
        out = beta == 0.0f ? float(sum) : float(sum + double(beta) * out);
      }
}

}  // namespace convlab::testing
