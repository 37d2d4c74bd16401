// Chooses the instruction set of the bin GEMM at run time, so one binary runs everywhere and
// still uses AVX-512 where the CPU has it.
#include "bin_gemm.hpp"

namespace convlab::cpu_fft {

int64_t bin_gemm_vector_bins(CpuIsa isa) { return cpu_isa_vector_floats(isa) / 2; }

void bin_gemm(CpuIsa isa, const BinGemmArgs& args, int64_t bin_begin, int64_t bin_end) {
  switch (isa) {
    case CpuIsa::avx512:
      avx512::bin_gemm(args, bin_begin, bin_end);
      break;
    case CpuIsa::avx2:
      avx2::bin_gemm(args, bin_begin, bin_end);
      break;
    case CpuIsa::generic:
      generic::bin_gemm(args, bin_begin, bin_end);
      break;
  }
}

}  // namespace convlab::cpu_fft
