// The avx2 build of cpu.winograd's tile transforms (see tile_kernels.inc).
#define WK_NAMESPACE avx2
#define WK_VECTOR_BYTES 32
#include "tile_kernels.inc"
