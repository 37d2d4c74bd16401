// The avx2 build of the transpose (see transpose.inc).
#define TR_NAMESPACE avx2
#define TR_VECTOR_BYTES 32
#include "transpose.inc"
