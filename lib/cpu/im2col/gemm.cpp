#include "gemm.hpp"

#include <Eigen/Core>
#include <array>
#include <atomic>
#include <string>

#include "convlab/config.hpp"
#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"

#if CONVLAB_HAVE_OPENBLAS
#include <cblas.h>
#endif
#if CONVLAB_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace convlab::im2col {

constexpr auto kGemmBackendNames = enum_names<GemmBackend::eigen>({
    {GemmBackend::onednn, "onednn"},
    {GemmBackend::openblas, "openblas"},
    {GemmBackend::eigen, "eigen"},
});

const char* to_string(GemmBackend backend) noexcept { return name_of(kGemmBackendNames, backend); }

bool gemm_backend_available(GemmBackend backend) noexcept {
  switch (backend) {
    case GemmBackend::onednn: return CONVLAB_HAVE_ONEDNN;
    case GemmBackend::openblas: return CONVLAB_HAVE_OPENBLAS;
    case GemmBackend::eigen: return true;
  }
  return false;
}

GemmBackend default_gemm_backend() noexcept {
  return CONVLAB_HAVE_OPENBLAS ? GemmBackend::openblas : GemmBackend::eigen;
}

namespace {

std::atomic<int> g_onednn_threads{1};

#if !CONVLAB_HAVE_ONEDNN || !CONVLAB_HAVE_OPENBLAS
[[noreturn]] void unavailable(GemmBackend backend) {
  throw Error(ErrorCode::unavailable,
              std::string("GEMM backend ") + to_string(backend) + " is not built in");
}
#endif

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using Map = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

void eigen_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  // A stored [m, k] (or [k, m] when transposed), B stored [k, n] (or [n, k]).
  const ConstMap A(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap B(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  Map C(c, m, n, Eigen::OuterStride<>(ldc));
  auto multiply = [&](const auto& op_a, const auto& op_b) {
    if (beta == 0.0f) {
      C.noalias() = op_a * op_b;
    } else {
      if (beta != 1.0f) C *= beta;
      C.noalias() += op_a * op_b;
    }
  };
  if (!trans_a && !trans_b) multiply(A, B);
  if (!trans_a && trans_b) multiply(A, B.transpose());
  if (trans_a && !trans_b) multiply(A.transpose(), B);
  if (trans_a && trans_b) multiply(A.transpose(), B.transpose());
}

}  // namespace

void set_gemm_threads(GemmBackend backend, int threads) {
  switch (backend) {
    case GemmBackend::onednn: g_onednn_threads = threads; break;
    case GemmBackend::openblas:
#if CONVLAB_HAVE_OPENBLAS
      openblas_set_num_threads(threads);
#endif
      break;
    // Eigen parallelises its products with OpenMP; this file is compiled with OpenMP when
    // the build found it (lib/cpu/im2col/CMakeLists.txt), else Eigen runs one thread.
    case GemmBackend::eigen: Eigen::setNbThreads(threads); break;
  }
}

void sgemm(GemmBackend backend, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc) {
  if (m == 0 || n == 0) return;
  switch (backend) {
    case GemmBackend::onednn: {
#if CONVLAB_HAVE_ONEDNN
#ifdef _OPENMP
      // dnnl_sgemm runs omp_get_max_threads() threads (one when called inside a parallel
      // region); set that count for this call only, leaving the caller's as it was.
      const int previous = omp_get_max_threads();
      omp_set_num_threads(g_onednn_threads.load());
#endif
      const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k,
                                              1.0f, a, lda, b, ldb, beta, c, ldc);
#ifdef _OPENMP
      omp_set_num_threads(previous);
#endif
      if (status != dnnl_success) {
        throw Error(ErrorCode::backend, "dnnl_sgemm " + std::to_string(m) + "x" +
                                            std::to_string(n) + "x" + std::to_string(k) +
                                            " failed: " + dnnl_status2str(status));
      }
      return;
#else
      unavailable(backend);
#endif
    }
    case GemmBackend::openblas:
#if CONVLAB_HAVE_OPENBLAS
      cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                  trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                  beta, c, static_cast<int>(ldc));
      return;
#else
      unavailable(backend);
#endif
    case GemmBackend::eigen:
      eigen_sgemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
      return;
  }
}

}  // namespace convlab::im2col
