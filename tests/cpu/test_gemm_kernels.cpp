// The GEMM kernels of every instruction set. The unpacked SGEMM, with A as stored and
// transposed, directly and through a column index, B's rows by stride or through an index of
// their offsets (with lane bits too), against a double-precision product: every edge
// of its register tiles (rows past a multiple of MR or of the one-vector tile's 2 MR, columns
// ending inside a vector or a panel, in both loop orders), an
// inner dimension of several blocks, strides wider than the matrices, k = 0, beta 0 (C not read: a
// NaN there is overwritten) and beta 1. The transpose exactly, on whole blocks and edges. Operands
// are allocated to their last element, so that a read past it shows under AddressSanitizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "cpu/gemm_kernels/strided_rows.hpp"
#include "cpu/gemm_kernels/transpose.hpp"
#include "cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "cpu/isa.hpp"

namespace convlab {
namespace {

struct Shape {
  int64_t m, n, k, lda_extra, ldb_extra, ldc_extra;
};

// Last element of a rows x cols matrix with row stride ld, plus one.
int64_t extent(int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

// op(A)[i, l]: A stored [m, k], or [k, m] when transposed; with an index, the stored column
// index[l] (or index[i], transposed) instead of l (i).
struct OpA {
  const std::vector<float>& a;
  int64_t lda;
  bool trans;
  const std::vector<int64_t>& index;
  double operator()(int64_t i, int64_t l) const {
    if (trans) return a[l * lda + (index.empty() ? i : index[i])];
    return a[i * lda + (index.empty() ? l : index[l])];
  }
};

// How A's columns are read: in order, or through an index of nearby columns or of far ones.
enum class AIndex { none, near, far };

// Runs of kRun columns each kFarStride columns apart, in a shuffled order: the far index (as
// cpu.im2col's transposed backward-data reads R*S taps of each of the filter's rows).
constexpr int64_t kRun = 3, kFarStride = 40;

// With an index, A is stored wider along the indexed dimension. A near index picks an
// increasing selection of its columns with gaps (as a tap class picks filter columns), over
// twice the width plus 3; a far one picks runs of kRun columns, kFarStride apart, in a shuffled
// order (jumps back and forth of more than a cache line).
// With `indexed_b`, B's rows start at offsets that overlap and go back and forth (as the
// implicit column buffer's rows do in a padded image).
void check(CpuIsa isa, bool trans_a, const Shape& s, float beta, std::mt19937& rng,
           AIndex a_index = AIndex::none, bool indexed_b = false) {
  const bool indexed = a_index != AIndex::none;
  const int64_t along = trans_a ? s.m : s.k;  // the dimension the index selects
  const int64_t runs = (along + kRun - 1) / kRun;
  std::vector<int64_t> index;
  if (a_index == AIndex::near) {
    std::bernoulli_distribution skip(0.5);
    for (int64_t column = 0; static_cast<int64_t>(index.size()) < along; ++column) {
      if (!skip(rng) || column >= along + 3) index.push_back(column);
    }
  } else if (a_index == AIndex::far) {
    std::vector<int64_t> order(static_cast<std::size_t>(runs));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int64_t l = 0; l < along; ++l) index.push_back(order[l / kRun] * kFarStride + l % kRun);
  }
  const int64_t stored = a_index == AIndex::near  ? 2 * along + 3
                         : a_index == AIndex::far ? runs * kFarStride
                                                  : along;
  const int64_t lda = stored + s.lda_extra, ldb = s.n + s.ldb_extra, ldc = s.n + s.ldc_extra;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> a(trans_a ? extent(s.k, stored, lda) : extent(s.m, stored, lda));
  std::vector<int64_t> b_index;
  if (indexed_b) {
    std::uniform_int_distribution<int64_t> offset(0, 3 * s.k + 5);
    for (int64_t l = 0; l < s.k; ++l) b_index.push_back(offset(rng));
  }
  int64_t b_size = extent(s.k, s.n, ldb);
  for (int64_t start : b_index) b_size = std::max(b_size, start + s.n);
  std::vector<float> b(static_cast<std::size_t>(b_size));
  auto b_at = [&](int64_t l, int64_t j) { return indexed_b ? b[b_index[l] + j] : b[l * ldb + j]; };
  std::vector<float> c(extent(s.m, s.n, ldc));
  for (float& x : a) x = value(rng);
  for (float& x : b) x = value(rng);
  for (float& x : c) x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : value(rng);
  const std::vector<float> c0 = c;
  cpu_gemm::unpacked_sgemm(isa, trans_a, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, beta,
                           c.data(), ldc, indexed ? index.data() : nullptr,
                           indexed_b ? b_index.data() : nullptr);
  const OpA op_a{a, lda, trans_a, index};
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t l = 0; l < s.k; ++l) {
        exact += op_a(i, l) * b_at(l, j);
        magnitude += std::abs(op_a(i, l) * b_at(l, j));
      }
      if (beta != 0.0f) {
        exact += beta * double(c0[i * ldc + j]);
        magnitude += std::abs(beta * double(c0[i * ldc + j]));
      }
      // Each sum of k products rounds at most k + 2 times (float, u = 2^-24).
      const double bound = (s.k + 2) * std::ldexp(1.0, -24) * magnitude + 1e-30;
      ASSERT_LE(std::abs(c[i * ldc + j] - exact), bound)
          << to_string(isa) << (trans_a ? " A^T " : " ")
          << (a_index == AIndex::near  ? "indexed "
              : a_index == AIndex::far ? "far-indexed "
                                       : "")
          << (indexed_b ? "B indexed " : "") << s.m << "x" << s.n << "x" << s.k << " beta " << beta
          << " at (" << i << ", " << j << ")";
    }
  }
  // Between rows of C (the stride's padding) nothing is written.
  for (int64_t i = 0; i + 1 < s.m; ++i) {
    for (int64_t j = s.n; j < ldc; ++j) {
      const float before = c0[i * ldc + j], after = c[i * ldc + j];
      ASSERT_TRUE(before == after || (std::isnan(before) && std::isnan(after)))
          << to_string(isa) << " wrote past column " << s.n << " of row " << i;
    }
  }
}

// B's rows through an index with lane bits (cpu.im2col's masked column buffer): rows of n
// floats, each at a place of its own, whose masked-off lanes hold NaN, so that a lane read
// against its bits shows in C; the rows share their bits for runs of steps, as the masked
// form orders its depth. The bits past column n are random, and the row placed last ends the
// allocation: no lane past the product's columns may be read either (AddressSanitizer).
// `readable`: B's floats but its first and last 5 are a span the product may read whatever
// the bits (plain loads and cleared lanes without AVX-512): the NaNs there must not show, and
// the vectors across the span's ends must still read only their lanes.
void check_masked(CpuIsa isa, bool trans_a, const Shape& s, float beta, std::mt19937& rng,
                  bool readable = false) {
  const int64_t words = (s.n + 15) / 16 + 1;
  constexpr int64_t kPatterns = 3;
  std::bernoulli_distribution set(0.7);
  std::vector<uint16_t> bits(static_cast<std::size_t>(kPatterns * words));
  for (uint16_t& word : bits) {
    for (int bit = 0; bit < 16; ++bit) word |= static_cast<uint16_t>(set(rng) ? 1u << bit : 0u);
  }
  const auto lane = [&](int64_t row, int64_t j) { return bits[row + j / 16] >> (j % 16) & 1u; };
  std::uniform_int_distribution<int64_t> run(1, 5);
  std::vector<int64_t> lane_row, b_index;
  for (int64_t l = 0, left = 0, pattern = 0; l < s.k; ++l, --left) {
    if (left == 0) {
      left = run(rng);
      pattern = (pattern + 1) % kPatterns;
    }
    lane_row.push_back(pattern * words);
  }
  // Row l at l * pitch + 3 in the reverse order of the steps.
  const int64_t pitch = s.n + 7;
  for (int64_t l = 0; l < s.k; ++l) b_index.push_back((s.k - 1 - l) * pitch + 3);
  std::vector<float> b(static_cast<std::size_t>(s.k > 0 ? (s.k - 1) * pitch + 3 + s.n : 1),
                       std::numeric_limits<float>::quiet_NaN());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t l = 0; l < s.k; ++l) {
    for (int64_t j = 0; j < s.n; ++j) {
      if (lane(lane_row[l], j)) b[b_index[l] + j] = value(rng);
    }
  }
  const int64_t lda = (trans_a ? s.m : s.k) + s.lda_extra, ldc = s.n + s.ldc_extra;
  std::vector<float> a(trans_a ? extent(s.k, s.m, lda) : extent(s.m, s.k, lda));
  for (float& x : a) x = value(rng);
  std::vector<float> c(extent(s.m, s.n, ldc));
  for (float& x : c) x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : value(rng);
  const std::vector<float> c0 = c;
  cpu_gemm::BLanes lanes{bits.data(), lane_row.data()};
  if (readable && b.size() > 10) {
    lanes.readable_begin = b.data() + 5;
    lanes.readable_end = b.data() + b.size() - 5;
  }
  cpu_gemm::unpacked_sgemm(isa, trans_a, s.m, s.n, s.k, a.data(), lda, b.data(), 0, beta, c.data(),
                           ldc, nullptr, b_index.data(), &lanes);
  const std::vector<int64_t> no_index;
  const OpA op_a{a, lda, trans_a, no_index};
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t l = 0; l < s.k; ++l) {
        if (!lane(lane_row[l], j)) continue;
        exact += op_a(i, l) * b[b_index[l] + j];
        magnitude += std::abs(op_a(i, l) * b[b_index[l] + j]);
      }
      if (beta != 0.0f) {
        exact += beta * double(c0[i * ldc + j]);
        magnitude += std::abs(beta * double(c0[i * ldc + j]));
      }
      const double bound = (s.k + 2) * std::ldexp(1.0, -24) * magnitude + 1e-30;
      ASSERT_LE(std::abs(c[i * ldc + j] - exact), bound)
          << to_string(isa) << (trans_a ? " A^T" : "") << " B masked"
          << (readable ? " (readable span)" : "") << " " << s.m << "x" << s.n << "x" << s.k
          << " beta " << beta << " at (" << i << ", " << j << ")";
    }
  }
}

TEST(UnpackedSgemm, EveryIsaEveryTileEdge) {
  std::mt19937 rng(7);
  std::vector<Shape> shapes;
  // 12, 13, 18 and 25 rows: a panel of up to half the full tile's vectors (one, or two with
  // AVX-512: 17 and 32 columns) runs 2 MR rows at a time, then MR.
  for (int64_t m : {1, 5, 6, 7, 12, 13, 18, 25}) {
    for (int64_t n : {1, 3, 8, 15, 16, 17, 32, 63, 64, 65, 130}) {
      shapes.push_back({m, n, 9, 0, 0, 0});
    }
  }
  // More rows than columns (rows outermost), the last panel one vector of AVX-512, AVX2 and
  // SSE2 (64 + 16, 16 + 8 and 8 + 4 columns) or two of AVX-512 (64 + 32): the full panels run
  // two tiles per step of rows.
  for (int64_t n : {80, 24, 12, 96}) shapes.push_back({n + 11, n, 9, 0, 0, 0});
  shapes.push_back({12, 64, 0, 0, 0, 0});       // k = 0: C = beta C
  shapes.push_back({7, 33, 40, 3, 5, 11});      // strides past the matrices
  shapes.push_back({64, 128, 64, 16, 16, 16});  // the per-point products' shape
  shapes.push_back({13, 70, 600, 1, 2, 3});     // three blocks of the inner dimension
  shapes.push_back({0, 5, 3, 0, 0, 0});
  shapes.push_back({5, 0, 3, 0, 0, 0});
  for (const auto& entry : kCpuIsaNames) {
    if (!cpu_isa_supported(entry.value)) {
      std::cout << "unpacked SGEMM with " << entry.name << ": not supported here, skipped\n";
      continue;
    }
    for (bool trans_a : {false, true}) {
      for (const Shape& s : shapes) {
        for (float beta : {0.0f, 1.0f}) {
          check(entry.value, trans_a, s, beta, rng);
          for (AIndex a_index : {AIndex::near, AIndex::far}) {
            check(entry.value, trans_a, s, beta, rng, a_index);
            check(entry.value, trans_a, s, beta, rng, a_index, /*indexed_b=*/true);
          }
          check(entry.value, trans_a, s, beta, rng, AIndex::none, /*indexed_b=*/true);
          check_masked(entry.value, trans_a, s, beta, rng);
          check_masked(entry.value, trans_a, s, beta, rng, /*readable=*/true);
        }
      }
    }
  }
}

// stream_a only fetches A's lines ahead of the steps that read them: the same bits as
// without, in both loop orders and at the tiles' edges, and nothing read past A's last element
// (a prefetch past it is not a read under AddressSanitizer). Transposed or indexed A ignore it.
TEST(UnpackedSgemm, StreamedAGivesTheSameBits) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const Shape shapes[] = {{256, 64, 256, 16, 0, 0},
                          {25, 130, 70, 0, 0, 0},
                          {91, 80, 9, 0, 0, 0},
                          {13, 70, 600, 1, 2, 3},
                          {7, 33, 40, 3, 5, 11}};
  for (const auto& entry : kCpuIsaNames) {
    if (!cpu_isa_supported(entry.value)) continue;
    for (bool trans_a : {false, true}) {
      for (const Shape& s : shapes) {
        const int64_t lda = (trans_a ? s.m : s.k) + s.lda_extra, ldb = s.n + s.ldb_extra;
        const int64_t ldc = s.n + s.ldc_extra;
        std::vector<float> a(trans_a ? extent(s.k, s.m, lda) : extent(s.m, s.k, lda));
        std::vector<float> b(extent(s.k, s.n, ldb));
        for (float& x : a) x = value(rng);
        for (float& x : b) x = value(rng);
        std::vector<float> plain(extent(s.m, s.n, ldc)), streamed(plain.size());
        cpu_gemm::unpacked_sgemm(entry.value, trans_a, s.m, s.n, s.k, a.data(), lda, b.data(), ldb,
                                 0.0f, plain.data(), ldc);
        cpu_gemm::unpacked_sgemm(entry.value, trans_a, s.m, s.n, s.k, a.data(), lda, b.data(), ldb,
                                 0.0f, streamed.data(), ldc, nullptr, nullptr, nullptr,
                                 /*stream_a=*/true);
        ASSERT_EQ(0, std::memcmp(plain.data(), streamed.data(), plain.size() * sizeof(float)))
            << entry.name << (trans_a ? " A^T " : " ") << s.m << "x" << s.n << "x" << s.k;
      }
    }
  }
}

TEST(Transpose, EveryIsaWholeBlocksAndEdges) {
  for (const auto& entry : kCpuIsaNames) {
    if (!cpu_isa_supported(entry.value)) {
      std::cout << "transpose with " << entry.name << ": not supported here, skipped\n";
      continue;
    }
    for (int64_t rows : {1, 4, 8, 15, 16, 17, 33, 64}) {
      for (int64_t cols : {1, 3, 8, 16, 31, 32, 130}) {
        for (int64_t extra : {0, 5}) {
          const int64_t lds = cols + extra, ldd = rows + 2 * extra;
          std::vector<float> src(extent(rows, cols, lds)), dst(extent(cols, rows, ldd), -1.0f);
          for (std::size_t e = 0; e < src.size(); ++e) src[e] = static_cast<float>(e);
          cpu_gemm::transpose(entry.value, rows, cols, src.data(), lds, dst.data(), ldd);
          for (int64_t j = 0; j < cols; ++j) {
            for (int64_t i = 0; i < ldd && j * ldd + i < static_cast<int64_t>(dst.size()); ++i) {
              const float expected = i < rows ? src[i * lds + j] : -1.0f;
              ASSERT_EQ(dst[j * ldd + i], expected)
                  << entry.name << " " << rows << "x" << cols << " extra " << extra << " at (" << j
                  << ", " << i << ")";
            }
          }
        }
      }
    }
  }
}

// Every width up to past two AVX-512 vectors, masked tails included: the rows get exactly
// their elements, and nothing between or after them is touched.
TEST(StridedRows, EveryIsaEveryWidth) {
  for (const auto& entry : kCpuIsaNames) {
    if (!cpu_isa_supported(entry.value)) {
      std::cout << "strided rows with " << entry.name << ": not supported here, skipped\n";
      continue;
    }
    for (int64_t width = 0; width <= 37; ++width) {
      for (int64_t rows : {0, 1, 3}) {
        const int64_t src_stride = width + 3, dst_stride = width + 5;
        std::vector<float> src(static_cast<std::size_t>(rows * src_stride + 1));
        for (std::size_t e = 0; e < src.size(); ++e) src[e] = static_cast<float>(e % 97) + 0.5f;
        for (bool add : {false, true}) {
          std::vector<float> dst(static_cast<std::size_t>(rows * dst_stride + 16), -7.0f);
          if (add) {
            cpu_gemm::add_rows(entry.value, src.data(), src_stride, rows, width, dst.data(),
                               dst_stride);
          } else {
            cpu_gemm::copy_rows(entry.value, src.data(), src_stride, rows, width, dst.data(),
                                dst_stride);
          }
          for (int64_t e = 0; e < static_cast<int64_t>(dst.size()); ++e) {
            const int64_t r = e / dst_stride, p = e % dst_stride;
            const bool inside = r < rows && p < width;
            const float source = inside ? src[static_cast<std::size_t>(r * src_stride + p)] : 0;
            const float expected = !inside ? -7.0f : add ? source - 7.0f : source;
            ASSERT_EQ(dst[static_cast<std::size_t>(e)], expected)
                << entry.name << (add ? " add" : " copy") << " width " << width << " rows " << rows
                << " at " << e;
          }
        }
      }
    }
  }
}

// Blocks of rows in one call: every block lands where its offsets say, each row exactly, and
// nothing between the blocks is touched (the tap classes' copies of every channel and image).
TEST(StridedRows, BlocksLandWhereTheirOffsetsSay) {
  for (const auto& entry : kCpuIsaNames) {
    if (!cpu_isa_supported(entry.value)) continue;
    for (int64_t width : {1, 5, 16, 21}) {
      const int64_t rows = 3, src_stride = width + 2, dst_stride = width;
      cpu_gemm::RowBlocks blocks;
      blocks.outer = 3;
      blocks.inner = 4;
      // Source blocks apart as an image's planes; destination blocks one after another in
      // each outer block, outer blocks spaced with a gap.
      blocks.src_inner = rows * src_stride + 1;
      blocks.src_outer = blocks.inner * blocks.src_inner + 3;
      blocks.dst_inner = rows * dst_stride;
      blocks.dst_outer = blocks.inner * blocks.dst_inner + 7;
      std::vector<float> src(static_cast<std::size_t>(blocks.outer * blocks.src_outer));
      for (std::size_t e = 0; e < src.size(); ++e) src[e] = static_cast<float>(e) + 0.25f;
      std::vector<float> dst(static_cast<std::size_t>(blocks.outer * blocks.dst_outer + 16), -7.0f);
      std::vector<float> want = dst;
      for (int64_t u = 0; u < blocks.outer; ++u)
        for (int64_t v = 0; v < blocks.inner; ++v)
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t p = 0; p < width; ++p) {
              want[static_cast<std::size_t>(u * blocks.dst_outer + v * blocks.dst_inner +
                                            r * dst_stride + p)] =
                  src[static_cast<std::size_t>(u * blocks.src_outer + v * blocks.src_inner +
                                               r * src_stride + p)];
            }
      cpu_gemm::copy_rows(entry.value, src.data(), src_stride, rows, width, dst.data(), dst_stride,
                          blocks);
      for (std::size_t e = 0; e < dst.size(); ++e) {
        ASSERT_EQ(dst[e], want[e]) << entry.name << " width " << width << " at " << e;
      }
    }
  }
}

}  // namespace
}  // namespace convlab
