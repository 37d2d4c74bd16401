// Chooses the instruction set of the bin GEMM at run time, so one binary runs everywhere and
// still uses AVX-512 where the CPU has it.
#include <string>

#include "bin_gemm.hpp"
#include "convlab/error.hpp"

namespace convlab::cpu_fft {

const char* to_string(BinGemmIsa isa) noexcept { return name_of(kBinGemmIsaNames, isa); }

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

BinGemmIsa bin_gemm_isa(const std::string& choice) {
  if (choice == "auto") {
    if (bin_gemm_isa_supported(BinGemmIsa::avx512)) return BinGemmIsa::avx512;
    if (bin_gemm_isa_supported(BinGemmIsa::avx2)) return BinGemmIsa::avx2;
    return BinGemmIsa::generic;
  }
  if (auto isa = find_value(kBinGemmIsaNames, choice)) {
    if (!bin_gemm_isa_supported(*isa)) {
      throw Error(ErrorCode::invalid_argument,
                  "knob cpu.fft.isa=" + choice + ": this CPU does not support it");
    }
    return *isa;
  }
  throw Error(ErrorCode::invalid_argument, "invalid value '" + choice.substr(0, 64) +
                                               "' for knob cpu.fft.isa: expected auto, "
                                               "generic, avx2 or avx512");
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
