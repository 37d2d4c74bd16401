// The generic build of the strided row copies (see strided_rows.inc).
#define SR_NAMESPACE generic
#define SR_VECTOR_BYTES 16
#include "strided_rows.inc"
