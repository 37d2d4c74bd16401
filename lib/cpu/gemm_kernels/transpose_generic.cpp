// The generic build of the transpose (see transpose.inc).
#define TR_NAMESPACE generic
#define TR_VECTOR_BYTES 16
#include "transpose.inc"
