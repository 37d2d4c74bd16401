#include "gemm.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <atomic>
#include <string>
#include <vector>

#include "convlab/config.hpp"
#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"
#include "cpu/gemm_kernels/transpose.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"

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

const char* to_string(GemmBackend backend) noexcept { return name_of(kGemmBackendNames, backend); }

bool gemm_backend_available(GemmBackend backend) noexcept {
  switch (backend) {
    case GemmBackend::onednn: return CONVLAB_HAVE_ONEDNN;
    case GemmBackend::openblas: return CONVLAB_HAVE_OPENBLAS;
    case GemmBackend::eigen:
    case GemmBackend::unpacked:
      return true;
  }
  return false;
}

namespace {
// Each packing buffer on its own 64-byte line, as Eigen aligns the ones it allocates.
constexpr int64_t pad16(int64_t floats) { return (floats + 15) / 16 * 16; }

// The unpacked SGEMM's threads take columns of C in multiples of this (a register tile's
// panel in every build), so that no panel is split.
constexpr int64_t kUnpackedColumnUnit = 64;

// Threads and columns per thread for the unpacked SGEMM of n columns.
struct ColumnSplit {
  int threads;
  int64_t columns;
};
ColumnSplit split_columns(int64_t n, int threads) {
  const int64_t units = std::max<int64_t>(1, (n + kUnpackedColumnUnit - 1) / kUnpackedColumnUnit);
  const int64_t t = std::clamp<int64_t>(threads, 1, units);
  const int64_t columns = (units + t - 1) / t * kUnpackedColumnUnit;
  return {static_cast<int>((n + columns - 1) / columns), columns};
}

// The most columns of a transposed B's block (512 KiB at the kernel's depth): the kernel
// keeps a block that size in L2 while it runs the rows of C outermost.
constexpr int64_t kTransposedBMostColumns = 512;
// A's depth block past which it no longer stays in L2 (1 MiB on the AMD EPYC VM, 2 MiB on the
// Intel Xeon VM) while the 64-column blocks of a transposed B pass under it.
constexpr int64_t kTransposedBWideABytes = 1 << 20;

// Columns of a transposed B transposed at once, for an m x n x k product of which a thread
// takes `columns`: one register panel (64 KiB at full depth), or, where A's depth block is
// past kTransposedBWideABytes and A is taller than the thread's columns are wide (dW^T = col
// dY^T: a column buffer of 1152 or 2304 rows against 128-512 channels of dY), all of them up
// to kTransposedBMostColumns. The kernel then runs the rows of C outermost, each row tile of A
// serving every column from L1, where 64 columns at a time streamed A from L3 once per block.
// Either way each element of C sums the same depth blocks in the same order.
int64_t transposed_b_columns(int64_t m, int64_t n, int64_t k, int64_t columns) {
  const int64_t wide = std::min({n, columns, kTransposedBMostColumns});
  const int64_t a_bytes =
      m * std::min(k, cpu_gemm::kUnpackedSgemmDepth) * static_cast<int64_t>(sizeof(float));
  return m > wide && a_bytes > kTransposedBWideABytes ? wide
                                                      : std::min(wide, kUnpackedColumnUnit);
}

GemmScratch plan_unpacked_scratch(bool trans_b, int64_t m, int64_t n, int64_t k, int threads,
                                  CpuIsa isa) {
  GemmScratch s;
  s.isa = isa;
  const ColumnSplit split = split_columns(n, threads);
  s.threads = split.threads;
  if (!trans_b || m <= 0 || n <= 0 || k <= 0) return s;
  s.depth_block = std::min(k, cpu_gemm::kUnpackedSgemmDepth);
  s.column_block = transposed_b_columns(m, n, k, split.columns);
  s.b_block = pad16(s.depth_block * s.column_block);
  s.bytes =
      static_cast<std::size_t>(s.threads) * static_cast<std::size_t>(s.b_block) * sizeof(float);
  return s;
}
}  // namespace

GemmScratch plan_gemm_scratch(GemmBackend backend, bool trans_b, int64_t m, int64_t n, int64_t k,
                              int threads, CpuIsa isa) {
  if (backend == GemmBackend::unpacked)
    return plan_unpacked_scratch(trans_b, m, n, k, threads, isa);
  GemmScratch s;
  if (backend != GemmBackend::eigen || m <= 0 || n <= 0 || k <= 0) return s;
  s.threads = static_cast<int>(std::clamp<int64_t>(threads, 1, m));
  // The blocking Eigen's own product would take for one thread's rows (its column-major
  // view: mc runs over the columns of C, nc over its rows).
  Eigen::Index kc = k, mc = n, nc = (m + s.threads - 1) / s.threads;
  Eigen::internal::computeProductBlockingSizes<float, float, 1>(kc, mc, nc, Eigen::Index{1});
  s.depth_block = kc;
  s.column_block = mc;
  s.row_block = nc;
  s.a_block = pad16(kc * nc);
  s.b_block = pad16(kc * mc);
  s.bytes = static_cast<std::size_t>(s.threads) * static_cast<std::size_t>(s.a_block + s.b_block) *
            sizeof(float);
  return s;
}

GemmBackend default_gemm_backend() noexcept { return GemmBackend::unpacked; }

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

// part(t) for t < threads: on this thread for one, else on an OpenMP team (static schedule).
template <class Part>
void run_parts(int threads, Part part) {
  if (threads <= 1) {
    part(0);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) part(t);
#endif
}

// The threads a planned product may fork: one inside a parallel region (a worker's own GEMM).
int threads_outside_regions(int planned) {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : planned;
#else
  (void)planned;
  return 1;
#endif
}

// Eigen's own product, which allocates its packing buffers: for callers without a plan.
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

// Eigen's blocking over buffers from the workspace. level3_blocking keeps its block sizes and
// buffer pointers protected so that a blocking type can supply them; the product allocates
// only where a pointer is null. Eigen computes a row-major C as the column-major Cᵀ = op(B)ᵀ
// op(A)ᵀ, so its left operand, packed into blockA in blocks of mc x kc, is op(B), and its
// right one (blockB, kc x nc) is op(A).
class WorkspaceBlocking : public Eigen::internal::level3_blocking<float, float> {
 public:
  WorkspaceBlocking(const GemmScratch& s, float* a_block, float* b_block) {
    m_blockA = b_block;
    m_blockB = a_block;
    m_mc = s.column_block;
    m_nc = s.row_block;
    m_kc = s.depth_block;
  }
};

template <int AOrder, int BOrder>
void eigen_rows(int64_t rows, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, WorkspaceBlocking& blocking) {
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, float, AOrder, false, float, BOrder,
                                                 false, Eigen::RowMajor, 1>::run(rows, n, k, a, lda,
                                                                                 b, ldb, c, 1, ldc,
                                                                                 1.0f, blocking);
}

// C = beta C + op(A) op(B) with Eigen's kernels on the planned blocking: the rows of C split
// into one contiguous run per thread, each packing into its own part of the scratch, so the
// product allocates nothing. Every element of C is summed over k in the same blocks and order
// whatever the thread count.
void eigen_sgemm_planned(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                         const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                         float* c, int64_t ldc, const GemmScratch& s, float* data) {
  // beta = 0 overwrites (a NaN already in C must not survive, as BLAS has it).
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.0f) {
      std::fill(row, row + n, 0.0f);
    } else if (beta != 1.0f) {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
  if (k == 0) return;
  const int threads = threads_outside_regions(static_cast<int>(std::min<int64_t>(s.threads, m)));
  const int64_t per_thread = (m + threads - 1) / threads;
  auto part = [&](int t) {
    const int64_t first = t * per_thread, rows = std::min(m, first + per_thread) - first;
    if (rows <= 0) return;
    float* mine = data + t * (s.a_block + s.b_block);
    WorkspaceBlocking blocking(s, mine, mine + s.a_block);
    const float* a_rows = trans_a ? a + first : a + first * lda;
    float* c_rows = c + first * ldc;
    if (!trans_a && !trans_b) {
      eigen_rows<Eigen::RowMajor, Eigen::RowMajor>(rows, n, k, a_rows, lda, b, ldb, c_rows, ldc,
                                                   blocking);
    } else if (!trans_a) {
      eigen_rows<Eigen::RowMajor, Eigen::ColMajor>(rows, n, k, a_rows, lda, b, ldb, c_rows, ldc,
                                                   blocking);
    } else if (!trans_b) {
      eigen_rows<Eigen::ColMajor, Eigen::RowMajor>(rows, n, k, a_rows, lda, b, ldb, c_rows, ldc,
                                                   blocking);
    } else {
      eigen_rows<Eigen::ColMajor, Eigen::ColMajor>(rows, n, k, a_rows, lda, b, ldb, c_rows, ldc,
                                                   blocking);
    }
  };
  run_parts(threads, part);
}

// C = beta C + op(A) B or op(A) Bᵀ on the unpacked SGEMM, its columns split over the planned
// threads. A transposed B (stored [n, k]) is transposed 64 columns by one depth block at a
// time into the thread's buffer, each 64-column strip of C summed over all depth blocks while
// it is in cache; the depth blocks are the kernel's own, so every element of C is summed in
// the same blocks and order whatever the thread count and whether B came transposed.
void unpacked_sgemm_planned(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                            const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                            float* c, int64_t ldc, const GemmScratch& planned, float* data,
                            const int64_t* a_index, const int64_t* b_index,
                            const cpu_gemm::BLanes* b_lanes) {
  const ColumnSplit split = split_columns(n, threads_outside_regions(planned.threads));
  GemmScratch s = planned;
  std::vector<float> own;  // a transposed B without a planned buffer (callers outside run())
  if (trans_b && k > 0) {
    const GemmScratch needed = plan_unpacked_scratch(true, m, n, k, split.threads, planned.isa);
    if (data == nullptr || planned.bytes == 0) {
      s = needed;
      own.resize(static_cast<std::size_t>(s.threads * s.b_block));
      data = own.data();
    } else if (planned.depth_block < needed.depth_block ||
               planned.column_block < std::min(needed.column_block, kUnpackedColumnUnit) ||
               planned.threads < needed.threads) {
      throw Error(ErrorCode::invalid_argument, "unpacked sgemm " + std::to_string(m) + "x" +
                                                   std::to_string(n) + "x" + std::to_string(k) +
                                                   " on " + std::to_string(split.threads) +
                                                   " threads exceeds its planned scratch of " +
                                                   std::to_string(planned.bytes) + " bytes");
    }
  }
  auto part = [&](int t) {
    const int64_t j0 = t * split.columns, cols = std::min(n, j0 + split.columns) - j0;
    if (cols <= 0) return;
    if (!trans_b || k == 0) {
      // The part's lane bits start at its first column (j0 is a multiple of 64).
      cpu_gemm::BLanes lanes;
      if (b_lanes != nullptr) {
        lanes = *b_lanes;
        lanes.words += j0 / 16;
      }
      cpu_gemm::unpacked_sgemm(s.isa, trans_a, m, cols, k, a, lda, b + j0, ldb, beta, c + j0, ldc,
                               a_index, b_index, b_lanes != nullptr ? &lanes : nullptr);
      return;
    }
    float* block = data + t * s.b_block;
    // A plan's scratch may hold fewer columns than this product would take (it was planned
    // for the plan's largest product): whole panels of them.
    const int64_t step =
        std::min(s.column_block, transposed_b_columns(m, n, k, split.columns));
    for (int64_t p0 = j0; p0 < j0 + cols; p0 += step) {
      const int64_t width = std::min(step, j0 + cols - p0);
      for (int64_t l0 = 0; l0 < k; l0 += cpu_gemm::kUnpackedSgemmDepth) {
        const int64_t depth = std::min(cpu_gemm::kUnpackedSgemmDepth, k - l0);
        cpu_gemm::transpose(s.isa, width, depth, b + p0 * ldb + l0, ldb, block, width);
        // The depth block's columns of A: an offset into A, or indexed, into the index.
        const bool by_index = a_index != nullptr && !trans_a;
        cpu_gemm::unpacked_sgemm(
            s.isa, trans_a, m, width, depth, trans_a ? a + l0 * lda : (by_index ? a : a + l0), lda,
            block, width, l0 == 0 ? beta : 1.0f, c + p0, ldc, by_index ? a_index + l0 : a_index);
      }
    }
  };
  run_parts(split.threads, part);
}

}  // namespace

std::string gemm_backend_runtime(GemmBackend backend) {
#if CONVLAB_HAVE_OPENBLAS
  if (backend == GemmBackend::openblas) {
    const char* core = openblas_get_corename();
    return std::string("openblas core ") + (core && *core ? core : "unknown");
  }
#endif
  (void)backend;
  return "";
}

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
    case GemmBackend::unpacked:
      break;
  }
}

void sgemm(GemmBackend backend, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc, const GemmScratch& scratch, float* scratch_data, const int64_t* a_index,
           const int64_t* b_index, const cpu_gemm::BLanes* b_lanes) {
  if (m == 0 || n == 0) return;
  if ((a_index != nullptr || b_index != nullptr) && backend != GemmBackend::unpacked) {
    throw Error(ErrorCode::invalid_argument, std::string("GEMM backend ") + to_string(backend) +
                                                 " cannot read A's columns or B's rows through "
                                                 "an index; only unpacked can");
  }
  if (b_lanes != nullptr && b_index == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                "unpacked sgemm: B's lanes given without the index that places its rows");
  }
  if (b_index != nullptr && trans_b) {
    throw Error(ErrorCode::invalid_argument,
                "unpacked sgemm: B's rows through an index, but B transposed (its rows are "
                "then the product's columns)");
  }
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
      if (scratch.bytes == 0 || scratch_data == nullptr) {
        eigen_sgemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
      } else {
        eigen_sgemm_planned(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, scratch,
                            scratch_data);
      }
      return;
    case GemmBackend::unpacked:
      unpacked_sgemm_planned(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, scratch,
                             scratch_data, a_index, b_index, b_lanes);
      return;
  }
}

}  // namespace convlab::im2col
