#pragma once
// The single-precision GEMM cpu.im2col calls, behind one signature with three backends:
// OpenBLAS's cblas_sgemm (when the build has OpenBLAS), an Eigen Map product (always) and
// oneDNN's dnnl_sgemm (when the build has oneDNN). All are declared in every build so that
// bench/micro/gemm_backend.cpp can time them side by side. The default is OpenBLAS, faster
// than Eigen by 2.4-4x as measured; dnnl_sgemm is faster still on AVX-512 machines but
// mallocs packing buffers inside every call (up to ~12 MB per thread, growing with the
// problem), outside the workspace, so it is opt-in (docs/strategy-im2col.md).

#include <cstdint>

namespace convlab::im2col {

enum class GemmBackend { onednn, openblas, eigen };

/// "onednn", "openblas" or "eigen".
const char* to_string(GemmBackend backend) noexcept;
/// Whether this build can run the backend (CONVLAB_HAVE_ONEDNN, CONVLAB_HAVE_OPENBLAS).
bool gemm_backend_available(GemmBackend backend) noexcept;
/// openblas when built, else eigen (onednn only when asked for: it allocates outside the
/// workspace).
GemmBackend default_gemm_backend() noexcept;

/// Threads the backend's GEMM uses from now on: openblas_set_num_threads, Eigen::setNbThreads,
/// or (onednn) the OpenMP thread count set around each dnnl_sgemm call. Process-wide, as the
/// libraries keep it; inside an OpenMP parallel region oneDNN and Eigen run one thread anyway.
void set_gemm_threads(GemmBackend backend, int threads);

/// Row-major C[m, n] = op(A)[m, k] * op(B)[k, n] + beta * C, op = transpose when asked;
/// lda/ldb/ldc are the row strides of A, B, C as stored. Sizes must fit int for openblas (the
/// callers' supports() checks that: OpenBLAS takes 32-bit dimensions). Throws
/// Error{backend} with the library status when the backend fails, Error{unavailable} for a
/// backend this build lacks.
void sgemm(GemmBackend backend, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc);

}  // namespace convlab::im2col
