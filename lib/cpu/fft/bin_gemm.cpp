// Chooses the instruction set of the bin GEMM at run time, so one binary runs everywhere and
// still uses AVX-512 where the CPU has it.
#include <cstdlib>
#include <string>

#include "bin_gemm.hpp"
#include "convlab/error.hpp"

namespace convlab::cpu_fft {

const char* to_string(BinGemmIsa isa) noexcept {
  switch (isa) {
    case BinGemmIsa::generic: return "generic";
    case BinGemmIsa::avx2: return "avx2";
    case BinGemmIsa::avx512: return "avx512";
  }
  return "?";
}

bool bin_gemm_isa_supported(BinGemmIsa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // __builtin_cpu_supports also checks that the OS saves the vector registers (XCR0).
  switch (isa) {
    case BinGemmIsa::generic: return true;
    case BinGemmIsa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case BinGemmIsa::avx512: return __builtin_cpu_supports("avx512f");
  }
  return false;
#else
  return isa == BinGemmIsa::generic;
#endif
}

BinGemmIsa bin_gemm_isa() {
  if (const char* env = std::getenv("CONVLAB_FFT_ISA")) {
    const std::string name = env;
    BinGemmIsa isa;
    if (name == "generic") {
      isa = BinGemmIsa::generic;
    } else if (name == "avx2") {
      isa = BinGemmIsa::avx2;
    } else if (name == "avx512") {
      isa = BinGemmIsa::avx512;
    } else {
      throw Error(ErrorCode::invalid_argument,
                  "CONVLAB_FFT_ISA='" + name + "': expected generic, avx2 or avx512");
    }
    if (!bin_gemm_isa_supported(isa)) {
      throw Error(ErrorCode::invalid_argument,
                  "CONVLAB_FFT_ISA='" + name + "': this CPU does not support it");
    }
    return isa;
  }
  if (bin_gemm_isa_supported(BinGemmIsa::avx512)) return BinGemmIsa::avx512;
  if (bin_gemm_isa_supported(BinGemmIsa::avx2)) return BinGemmIsa::avx2;
  return BinGemmIsa::generic;
}

int64_t bin_gemm_vector_bins(BinGemmIsa isa) {
  return isa == BinGemmIsa::avx512 ? 8 : isa == BinGemmIsa::avx2 ? 4 : 2;
}

void bin_gemm(BinGemmIsa isa, const BinGemmArgs& args, int64_t bin_begin, int64_t bin_end) {
  switch (isa) {
    case BinGemmIsa::avx512: avx512::bin_gemm(args, bin_begin, bin_end); break;
    case BinGemmIsa::avx2: avx2::bin_gemm(args, bin_begin, bin_end); break;
    case BinGemmIsa::generic: generic::bin_gemm(args, bin_begin, bin_end); break;
  }
}

}  // namespace convlab::cpu_fft
