#pragma once
// The single-precision GEMM cpu.im2col calls, behind one signature with four backends:
// OpenBLAS's cblas_sgemm (when the build has OpenBLAS), an Eigen Map product (always),
// oneDNN's dnnl_sgemm (when the build has oneDNN) and the library's own unpacked SGEMM
// (cpu/gemm_kernels, always). All are declared in every build so that
// bench/micro/gemm_backend.cpp can time them side by side. OpenBLAS is faster than Eigen by
// 2.4-4x as measured; dnnl_sgemm is faster still on AVX-512 machines but mallocs packing
// buffers inside every call (up to ~12 MB per thread, growing with the problem), outside the
// workspace, so it is opt-in. The unpacked SGEMM skips the copy a BLAS makes of the column
// buffer (its packing was a fifth of the forward pass on a 56x56 layer) and takes its one
// buffer, for a transposed B, from the workspace (docs/strategy-im2col.md).

#include <cstddef>
#include <cstdint>

#include "convlab/enum_names.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "cpu/isa.hpp"

namespace convlab::im2col {

enum class GemmBackend { onednn, openblas, eigen, unpacked };
inline constexpr auto kGemmBackendNames = enum_names<GemmBackend::unpacked>({
    {GemmBackend::onednn, "onednn"},
    {GemmBackend::openblas, "openblas"},
    {GemmBackend::eigen, "eigen"},
    {GemmBackend::unpacked, "unpacked"},
});

/// "onednn", "openblas", "eigen" or "unpacked".
const char* to_string(GemmBackend backend) noexcept;
/// Whether this build can run the backend (CONVLAB_HAVE_ONEDNN, CONVLAB_HAVE_OPENBLAS).
bool gemm_backend_available(GemmBackend backend) noexcept;
/// unpacked: measured faster than OpenBLAS on ResNet-50's 3x3 layers (docs/strategy-im2col.md),
/// in every build, and it allocates nothing outside the workspace (onednn only when asked
/// for: it does).
GemmBackend default_gemm_backend() noexcept;

/// What the backend's library says at run time about the code it runs on this CPU, or "" when
/// nothing beyond its version (the build records that) changes its speed. OpenBLAS: the core
/// its DYNAMIC_ARCH build chose ("Haswell", "SkylakeX", ...). A CPU newer than the build falls
/// back to an old core: Debian 12's 0.3.21 runs an Emerald Rapids Xeon on "Prescott", its SSE3
/// kernels, at a fraction of the AVX-512 rate.
std::string gemm_backend_runtime(GemmBackend backend);

/// Threads the backend's GEMM uses from now on: openblas_set_num_threads, Eigen::setNbThreads,
/// or (onednn) the OpenMP thread count set around each dnnl_sgemm call. Process-wide, as the
/// libraries keep it; inside an OpenMP parallel region oneDNN and Eigen run one thread anyway.
/// The unpacked SGEMM takes its threads from its planned scratch instead.
void set_gemm_threads(GemmBackend backend, int threads);

/// The packing buffers a GEMM takes from the caller's workspace. Eigen packs blocks of both
/// operands before multiplying and, left to itself, takes those buffers from the heap inside
/// every product larger than its 128 KiB stack limit, and once per thread in its own
/// parallel product: memory no workspace accounts for. So the Eigen backend plans its
/// blocking here, when the caller plans, and runs on buffers carved from the workspace, each
/// of `threads` threads on its own rows of C. The unpacked SGEMM reads B's rows as vectors,
/// so a transposed B is transposed into its buffer one depth block at a time (kc =
/// kUnpackedSgemmDepth), each of `threads` threads on its own columns of C. OpenBLAS and
/// oneDNN keep their own buffers (their allowances are in docs/memory-honesty.md): their
/// scratch is empty.
struct GemmScratch {
  int64_t depth_block = 0;   ///< kc: the k-extent of a packed (Eigen) or transposed block
  int64_t row_block = 0;     ///< rows of C (of op(A)) packed at once
  int64_t column_block = 0;  ///< columns of C (of op(B)) packed at once, per thread
  int64_t a_block = 0;       ///< floats of one thread's op(A) buffer: pad16(depth x row block)
  int64_t b_block = 0;       ///< floats of one thread's op(B) buffer: pad16(depth x column block)
  int threads = 1;           ///< threads splitting C (1 inside a parallel region)
  /// The instruction set of the unpacked SGEMM's kernels (the widest this CPU runs unless
  /// planned otherwise).
  CpuIsa isa = cpu_isa("auto", "");
  std::size_t bytes = 0;  ///< workspace bytes: threads x (a_block + b_block) floats
};

/// The scratch of the largest product a plan issues (m x n x k, B transposed or not) on
/// `threads` threads; any smaller product of the plan runs in it too. Empty for backends that
/// need none. `isa` is the unpacked SGEMM's (ignored by the others).
GemmScratch plan_gemm_scratch(GemmBackend backend, bool trans_b, int64_t m, int64_t n, int64_t k,
                              int threads, CpuIsa isa);

/// Row-major C[m, n] = op(A)[m, k] * op(B)[k, n] + beta * C, op = transpose when asked;
/// lda/ldb/ldc are the row strides of A, B, C as stored. Sizes must fit int for openblas (the
/// callers' supports() checks that: OpenBLAS takes 32-bit dimensions). `scratch` is planned
/// by plan_gemm_scratch for a product at least this large and `scratch_data` holds its
/// bytes (64-byte aligned); without them (empty scratch) Eigen allocates as it likes and the
/// unpacked SGEMM allocates its transposed B, which only code outside a plan's run() may
/// accept. Throws Error{backend} with the library status
/// when the backend fails, Error{unavailable} for a backend this build lacks.
///
/// `a_index` selects A's stored columns, `b_index` places B's rows (B not transposed) and
/// `b_lanes` (with b_index) the columns each holds, as cpu_gemm::unpacked_sgemm does (the tap
/// classes' filter columns, the implicit and direct column buffers' rows); only the unpacked
/// backend takes them, the others throw Error{invalid_argument}.
void sgemm(GemmBackend backend, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc, const GemmScratch& scratch = {}, float* scratch_data = nullptr,
           const int64_t* a_index = nullptr, const int64_t* b_index = nullptr,
           const cpu_gemm::BLanes* b_lanes = nullptr);

}  // namespace convlab::im2col
