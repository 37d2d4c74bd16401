// The generic build of cpu.winograd's tile transforms (see tile_kernels.inc).
#define WK_NAMESPACE generic
#define WK_VECTOR_BYTES 16
#include "tile_kernels.inc"
