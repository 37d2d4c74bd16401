// The avx2 build of the unpacked SGEMM (see unpacked_sgemm.inc).
#define UG_NAMESPACE avx2
#define UG_VECTOR_BYTES 32
#define UG_MR 6
#define UG_NV 2
#include "unpacked_sgemm.inc"
