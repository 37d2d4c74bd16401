#include "fft_cgemm.hpp"

#include <algorithm>
#include <string>

#include "convlab/error.hpp"

namespace convlab::cuda {
namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw Error(ErrorCode::invalid_argument, "fft_cgemm_call: " + why);
}

// A matrix of rows x cols whose element (r, c) sits at r*stride_r + c*stride_c, read as
// column-major storage: possible when the rows have unit stride (or there is one row).
// Returns the leading dimension, or 0 when it is not column-major that way.
int64_t column_major_ld(int64_t rows, int64_t stride_r, int64_t cols, int64_t stride_c) {
  if (stride_r != 1 && rows != 1) return 0;
  const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : stride_c;
  return ld >= rows && ld >= 1 ? ld : 0;
}

// The operand X (rows x cols) with X(r, c) = op(T(r, c)) where T's element (r, c) is at
// r*stride_r + c*stride_c and op conjugates when `conj`. False when cuBLAS cannot read it.
bool operand(const FftOperand& t, bool conj, int64_t rows, int64_t stride_r, int64_t cols,
             int64_t stride_c, int64_t planes, CgemmOperand* o) {
  o->tensor = t.tensor;
  o->per_group = t.group;
  o->stride = planes;
  if (!conj) {
    if (int64_t ld = column_major_ld(rows, stride_r, cols, stride_c)) {
      o->op = 'N', o->ld = ld;
      return true;
    }
  }
  // The transpose of a cols x rows column-major matrix S(c, r) = T(r, c).
  if (int64_t ld = column_major_ld(cols, stride_c, rows, stride_r)) {
    o->op = conj ? 'C' : 'T', o->ld = ld;
    return true;
  }
  return false;
}

}  // namespace

CgemmCall fft_cgemm_call(const FftGeometry& g) {
  if (g.layout != FftSpectrumLayout::frequency_major) refuse("needs the frequency-major layout");
  const FftGemm& f = g.gemm;
  const FftOperand& A = f.a;
  const FftOperand& B = f.b;
  const FftOperand& O = f.out;
  const int64_t pa = fft_planes(g, A.tensor), pb = fft_planes(g, B.tensor);
  CgemmCall call;
  call.groups = f.groups;
  call.c.tensor = O.tensor;
  call.c.per_group = O.group;
  call.c.stride = fft_planes(g, O.tensor);
  // out = opA(A)[m x l] * opB(B)[l x n]; with a dimension of 1 both forms may store the
  // output, and the operands decide.
  if (int64_t ld = column_major_ld(f.m, O.row, f.n, O.col)) {
    call.m = f.m, call.n = f.n, call.k = f.l, call.c.ld = ld;
    if (operand(A, A.conj, f.m, A.row, f.l, A.col, pa, &call.a) &&
        operand(B, B.conj, f.l, B.row, f.n, B.col, pb, &call.b)) {
      return call;
    }
  }
  // out^T[n x m] = opB(B)^T[n x l] * opA(A)^T[l x m]
  if (int64_t ld = column_major_ld(f.n, O.col, f.m, O.row)) {
    call.m = f.n, call.n = f.m, call.k = f.l, call.c.ld = ld;
    if (operand(B, B.conj, f.n, B.col, f.l, B.row, pb, &call.a) &&
        operand(A, A.conj, f.l, A.col, f.m, A.row, pa, &call.b)) {
      return call;
    }
  }
  refuse("the product of " + std::string(to_string(g.pass)) +
         " has no column-major form cuBLAS can compute");
}

}  // namespace convlab::cuda
