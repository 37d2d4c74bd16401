// FastDivmod (lib/strategy/fast_divmod.hpp) against plain integer division: every dividend
// below 2^16 for every divisor up to 1024 (and the sizes index math divides by: planes,
// rows, strides); the dividends around each multiple of the divisor near the top of the
// int64_t range; divisors around powers of two up to 2^62; seeded random pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>

#include "convlab/error.hpp"
#include "strategy/fast_divmod.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

// "" when FastDivmod agrees with / and % on n; else the case.
::testing::AssertionResult agrees(const FastDivmod& f, int64_t n) {
  int64_t rest = -1;
  const int64_t q = f.divmod(n, &rest);
  if (q == n / f.divisor && rest == n % f.divisor && f.divide(n) == q) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << n << " / " << f.divisor << ": got " << q << " rest "
                                       << rest << ", expected " << n / f.divisor << " rest "
                                       << n % f.divisor;
}

TEST(FastDivmod, EverySmallDividendBySmallDivisors) {
  for (int64_t d = 1; d <= 1024; ++d) {
    const FastDivmod f = FastDivmod::make(d);
    for (int64_t n = 0; n < (int64_t(1) << 16); ++n) ASSERT_TRUE(agrees(f, n));
  }
}

TEST(FastDivmod, SizesOfIndexMath) {
  // Plane and row sizes of real layers (224*224, 56*56*64, smooth FFT sizes ...), with every
  // dividend up to a few planes.
  for (int64_t d : {3 * 3, 7 * 7, 27, 55 * 55, 56 * 56, 224 * 224, 56 * 56 * 64, 125 * 126,
                    2048 * 1025, 1 << 20, (1 << 20) + 1, 999983}) {
    const FastDivmod f = FastDivmod::make(d);
    for (int64_t n = 0; n < 4 * d + 17; ++n) ASSERT_TRUE(agrees(f, n));
  }
}

TEST(FastDivmod, NearTheTopOfTheRange) {
  const int64_t top = std::numeric_limits<int64_t>::max();
  for (int64_t d : {int64_t(1), int64_t(2), int64_t(3), int64_t(7), int64_t(641), int64_t(65537),
                    int64_t(1) << 31, (int64_t(1) << 31) + 1, int64_t(4294967311),
                    (int64_t(1) << 62) - 1, int64_t(1) << 62, (int64_t(1) << 62) + 1, top - 1,
                    top}) {
    const FastDivmod f = FastDivmod::make(d);
    const int64_t last = top / d * d;  // the largest multiple of d
    // k stays within last / d so that k * d cannot overflow for divisors near the top.
    for (int64_t k = 0; k < 4 && k <= last / d; ++k) {
      const int64_t multiple = last - k * d;
      for (int64_t delta = -2; delta <= 2; ++delta) {
        if (delta > top - multiple || multiple + delta < 0) continue;  // outside [0, top]
        ASSERT_TRUE(agrees(f, multiple + delta));
      }
    }
    ASSERT_TRUE(agrees(f, top));
    ASSERT_TRUE(agrees(f, 0));
  }
}

TEST(FastDivmod, AroundPowersOfTwo) {
  for (int s = 1; s <= 62; ++s) {
    for (int64_t delta = -1; delta <= 1; ++delta) {
      const FastDivmod f = FastDivmod::make((int64_t(1) << s) + delta);
      const int64_t top = std::numeric_limits<int64_t>::max();
      const int64_t d = f.divisor;
      for (int64_t n : {int64_t(0), int64_t(1), d - 1, d, d < top ? d + 1 : d,
                        d <= top / 2 ? 2 * d - 1 : d, top}) {
        ASSERT_TRUE(agrees(f, n));
      }
    }
  }
}

TEST(FastDivmod, RandomPairs) {
  const uint64_t seed = testing::run_seed();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200000; ++i) {
    const int bits = 1 + int(rng() % 63);  // divisors of every magnitude
    const int64_t d = std::max<int64_t>(1, int64_t(rng() >> (64 - bits)));
    const int64_t n = int64_t(rng() >> 1);
    ASSERT_TRUE(agrees(FastDivmod::make(d), n)) << "seed " << seed;
  }
}

TEST(FastDivmod, RefusesANonPositiveDivisor) {
  for (int64_t d : {int64_t(0), int64_t(-1), std::numeric_limits<int64_t>::min()}) {
    try {
      FastDivmod::make(d);
      ADD_FAILURE() << "divisor " << d << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(std::to_string(d)), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace convlab
