// The avx2 build of the strided row copies (see strided_rows.inc).
#define SR_NAMESPACE avx2
#define SR_VECTOR_BYTES 32
#include "strided_rows.inc"
