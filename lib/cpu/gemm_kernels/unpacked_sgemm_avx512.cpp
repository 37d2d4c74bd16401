// The avx512 build of the unpacked SGEMM (see unpacked_sgemm.inc).
#define UG_NAMESPACE avx512
#define UG_VECTOR_BYTES 64
#define UG_MR 6
#define UG_NV 4
#include "unpacked_sgemm.inc"
