// The avx512 build of the strided row copies (see strided_rows.inc).
#define SR_NAMESPACE avx512
#define SR_VECTOR_BYTES 64
#include "strided_rows.inc"
