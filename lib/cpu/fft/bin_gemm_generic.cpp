// The generic build of the bin-vectorised complex GEMM (see bin_gemm_kernel.inc).
#define BG_NAMESPACE generic
#define BG_VECTOR_BYTES 16
#define BG_MR 1
#define BG_NR 4
#include "bin_gemm_kernel.inc"
