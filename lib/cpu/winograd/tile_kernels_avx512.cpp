// The avx512 build of cpu.winograd's tile transforms (see tile_kernels.inc).
#define WK_NAMESPACE avx512
#define WK_VECTOR_BYTES 64
#include "tile_kernels.inc"
