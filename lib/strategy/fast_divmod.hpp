#pragma once
// Division by a divisor fixed at plan time, without a divide instruction: a 64-bit integer
// division costs a GPU dozens of instructions (it has no divider), and the index math of
// the staging kernels splits every element index into image, channel, row and column.
//
// Granlund and Montgomery, "Division by invariant integers using multiplication" (PLDI
// 1994), figure 4.1, for N = 64-bit unsigned dividends: with l = ceil(log2 d) and
//   m = floor(2^64 * (2^l - d) / d) + 1            (fits 64 bits: 2^l - d < d)
//   t = mulhi(m, n),  q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0)
// q = floor(n / d) for every 0 <= n < 2^64 and 1 <= d < 2^64. Our dividends and divisors
// are non-negative int64_t values, inside that range. d = 1 gives m = 1, t = 0, q = n.
//
// make() runs on the host at plan time (128-bit arithmetic, validates); divide/divmod are
// CONVLAB_HD and branch-free. Checked against plain division exhaustively over small ranges
// and at the edges of the int64_t range (tests/cpu/test_fast_divmod.cpp).

#include <cstdint>
#include <string>

#include "convlab/error.hpp"
#include "strategy/hd.hpp"

namespace convlab {

// GCC and Clang's 128-bit integer (nvcc's host compiler too); __extension__ keeps -Wpedantic
// quiet about it.
__extension__ typedef unsigned __int128 FastDivmodWide;

struct FastDivmod {
  int64_t divisor = 1;
  uint64_t multiplier = 1;
  unsigned shift1 = 0, shift2 = 0;

  /// The divider for `d` (host only). Throws Error{invalid_argument} for d < 1.
  static FastDivmod make(int64_t d) {
    if (d < 1) {
      throw Error(ErrorCode::invalid_argument,
                  "FastDivmod: divisor " + std::to_string(d) + " is not positive");
    }
    unsigned l = 0;
    while (l < 63 && (uint64_t(1) << l) < uint64_t(d)) ++l;  // ceil(log2 d); d < 2^63
    FastDivmod f;
    f.divisor = d;
    const FastDivmodWide num = FastDivmodWide((uint64_t(1) << l) - uint64_t(d)) << 64;
    f.multiplier = uint64_t(num / uint64_t(d)) + 1;
    f.shift1 = l < 1 ? l : 1;
    f.shift2 = l > 1 ? l - 1 : 0;
    return f;
  }

  /// floor(n / divisor) for 0 <= n.
  CONVLAB_HD int64_t divide(int64_t n) const {
    const uint64_t u = uint64_t(n);
#if defined(__CUDA_ARCH__)
    const uint64_t t = __umul64hi(multiplier, u);
#else
    const uint64_t t = uint64_t((FastDivmodWide(multiplier) * u) >> 64);
#endif
    return int64_t((t + ((u - t) >> shift1)) >> shift2);
  }

  /// floor(n / divisor), and n - that * divisor in *rest, for 0 <= n.
  CONVLAB_HD int64_t divmod(int64_t n, int64_t* rest) const {
    const int64_t q = divide(n);
    *rest = n - q * divisor;
    return q;
  }
};

/// FastDivmod's interface with the divide instruction, for index math that is written once
/// for both (a template on the divider) and runs where precomputing does not pay.
struct PlainDivmod {
  int64_t divisor = 1;
  CONVLAB_HD int64_t divmod(int64_t n, int64_t* rest) const {
    const int64_t q = n / divisor;
    *rest = n - q * divisor;
    return q;
  }
};

}  // namespace convlab
