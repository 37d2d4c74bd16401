// The avx512 build of the transpose (see transpose.inc).
#define TR_NAMESPACE avx512
#define TR_VECTOR_BYTES 64
#include "transpose.inc"
