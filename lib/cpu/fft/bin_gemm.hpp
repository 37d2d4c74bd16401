#pragma once
// The per-bin complex matrix products of cpu.fft, vectorised ACROSS bins.
//
// The spectra are plane-major (each plane's half spectrum contiguous, interleaved complex
// floats), so the same bin of consecutive planes is plane_stride apart and a SIMD vector holds
// consecutive bins of ONE plane. For every bin b of a vector the kernel computes
//   out(g, i, j)[b] = sum_l opA(A(g, i, l)[b]) * opB(B(g, l, j)[b])
// i.e. one small complex GEMM per bin, all bins of the vector at once. Its speed therefore
// does not depend on the matrix shape (C = 3, depthwise or 512 channels alike), which a
// per-bin call to cblas_cgemm on the frequency-major layout cannot offer.
//
// Complex arithmetic without shuffles in the inner loop: with a = (ar, ai) and b = (br, bi)
// interleaved, accumulate P = sum dup_re(a) * b = (ar br, ar bi) and Q = sum dup_im(a) * b =
// (ai br, ai bi) with plain FMAs; the conjugation variants only differ in how P and Q are
// combined once at the end (see combine() in bin_gemm_kernel.inc).

#include <array>
#include <cstdint>
#include <string>

#include "cpu/isa.hpp"
#include "strategy/fft_geometry.hpp"

namespace convlab::cpu_fft {

/// Complex bins per SIMD vector of `isa` (2, 4, 8); bin ranges must be multiples of it.
int64_t bin_gemm_vector_bins(CpuIsa isa);

/// One pass's product on actual buffers.
struct BinGemmArgs {
  const float* a = nullptr;  ///< spectra of operand A (interleaved complex, plane-major)
  const float* b = nullptr;
  float* out = nullptr;
  int64_t plane_stride = 0;  ///< complex elements between planes of every buffer
  FftGemm shape;             ///< the per-bin product (from fft_geometry)
};

/// Computes the product for bins [bin_begin, bin_end) of every plane; both bounds are
/// multiples of bin_gemm_vector_bins(isa). Overwrites those bins of `out`.
void bin_gemm(CpuIsa isa, const BinGemmArgs& args, int64_t bin_begin, int64_t bin_end);

namespace generic {
void bin_gemm(const BinGemmArgs& args, int64_t bin_begin, int64_t bin_end);
}
namespace avx2 {
void bin_gemm(const BinGemmArgs& args, int64_t bin_begin, int64_t bin_end);
}
namespace avx512 {
void bin_gemm(const BinGemmArgs& args, int64_t bin_begin, int64_t bin_end);
}

}  // namespace convlab::cpu_fft
