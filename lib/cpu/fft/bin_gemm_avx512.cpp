// The avx512 build of the bin-vectorised complex GEMM (see bin_gemm_kernel.inc).
#define BG_NAMESPACE avx512
#define BG_VECTOR_BYTES 64
#define BG_MR 2
#define BG_NR 4
#include "bin_gemm_kernel.inc"
