// The generic build of the unpacked SGEMM (see unpacked_sgemm.inc).
#define UG_NAMESPACE generic
#define UG_VECTOR_BYTES 16
#define UG_MR 6
#define UG_NV 2
#include "unpacked_sgemm.inc"
