// The Winograd transforms of strategy/winograd_transform.hpp against their defining identity,
// in double (exact up to the rounding of 1/6, 1/12, 1/24): A^T [(G g) .* (B^T d)] is the
// direct correlation in one and two dimensions, the adjoint chain is the direct filter
// gradient, and the growth factor bounds the transforms run on absolute values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "strategy/winograd_transform.hpp"
#include "support/conv_tester.hpp"

namespace convlab::winograd {
namespace {

template <int M>
void check_one_dimension(std::mt19937_64& rng) {
  constexpr int a = Tile<M>::alpha;
  std::uniform_real_distribution<double> uniform(-1, 1);
  double d[a], w[3];
  for (double& e : d) e = uniform(rng);
  for (double& e : w) e = uniform(rng);
  double gw[a], bd[a];
  for (int i = 0; i < a; ++i) {
    gw[i] = bd[i] = 0;
    for (int k = 0; k < 3; ++k) gw[i] += g<M, double>(i, k) * w[k];
    for (int k = 0; k < a; ++k) bd[i] += bt<M, double>(i, k) * d[k];
  }
  for (int o = 0; o < M; ++o) {
    double y = 0, direct = 0, magnitude = 0;
    for (int i = 0; i < a; ++i) y += at<M, double>(o, i) * gw[i] * bd[i];
    for (int k = 0; k < 3; ++k) direct += d[o + k] * w[k], magnitude += std::fabs(d[o + k] * w[k]);
    EXPECT_NEAR(y, direct, 1e-14 * 64 * magnitude) << "F(" << M << ",3) output " << o;
  }
}

TEST(WinogradTransform, OneDimensionIsTheCorrelation) {
  std::mt19937_64 rng(testing::run_seed());
  for (int trial = 0; trial < 200; ++trial) {
    check_one_dimension<2>(rng);
    check_one_dimension<4>(rng);
  }
}

template <int M>
void check_two_dimensions(std::mt19937_64& rng) {
  constexpr int a = Tile<M>::alpha, pts = Tile<M>::points;
  std::uniform_real_distribution<double> uniform(-1, 1);
  double d[pts], w[9], v[pts], u[pts], prod[pts], y[M * M];
  for (double& e : d) e = uniform(rng);
  for (double& e : w) e = uniform(rng);
  input_transform<M>(d, v);
  filter_transform<M>(w, u);
  for (int xi = 0; xi < pts; ++xi) prod[xi] = u[xi] * v[xi];
  output_transform<M>(prod, y);
  for (int oi = 0; oi < M; ++oi)
    for (int oj = 0; oj < M; ++oj) {
      double direct = 0, magnitude = 0;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          direct += d[(oi + i) * a + oj + j] * w[i * 3 + j];
          magnitude += std::fabs(d[(oi + i) * a + oj + j] * w[i * 3 + j]);
        }
      EXPECT_NEAR(y[oi * M + oj], direct, 1e-14 * 256 * magnitude)
          << "F(" << M << "x" << M << ",3x3) output " << oi << "," << oj;
    }

  // Adjoint: G^T [(A dY A^T) .* (B^T d B)] G is dw[i,j] = sum_o dY[o] d[o + (i,j)].
  double dy[M * M], p[pts], q[pts], dw[9];
  for (double& e : dy) e = uniform(rng);
  output_adjoint<M>(dy, p);
  for (int xi = 0; xi < pts; ++xi) q[xi] = p[xi] * v[xi];
  filter_adjoint<M>(q, dw);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double direct = 0, magnitude = 0;
      for (int oi = 0; oi < M; ++oi)
        for (int oj = 0; oj < M; ++oj) {
          direct += dy[oi * M + oj] * d[(oi + i) * a + oj + j];
          magnitude += std::fabs(dy[oi * M + oj] * d[(oi + i) * a + oj + j]);
        }
      EXPECT_NEAR(dw[i * 3 + j], direct, 1e-14 * 256 * magnitude)
          << "F(" << M << ") filter gradient " << i << "," << j;
    }
}

TEST(WinogradTransform, TwoDimensionsAndAdjoint) {
  std::mt19937_64 rng(testing::run_seed() + 1);
  for (int trial = 0; trial < 200; ++trial) {
    check_two_dimensions<2>(rng);
    check_two_dimensions<4>(rng);
  }
}

TEST(WinogradTransform, FloatTablesAreTheRoundedCoefficients) {
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ((g<4, float>(i, j)), static_cast<float>(g<4, double>(i, j)));
    }
  EXPECT_EQ((g<4, float>(3, 0)), static_cast<float>(1.0 / 24));
}

// The growth factor must bound the whole chain run on absolute values (what the rounding
// analysis multiplies gamma by): ||A^T [(|G||g||G^T|) .* (|B^T||d||B|)] A|| over ||g|| ||d||.
template <int M>
double worst_absolute_growth(std::mt19937_64& rng) {
  constexpr int a = Tile<M>::alpha, pts = Tile<M>::points;
  std::uniform_real_distribution<double> uniform(-1, 1);
  auto abs_sandwich = [](const double* in, double* out, int rows, int cols, auto entry) {
    std::vector<double> half(rows * cols, 0.0);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        for (int k = 0; k < cols; ++k)
          half[i * cols + j] += std::fabs(entry(i, k)) * in[k * cols + j];
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < rows; ++j) {
        out[i * rows + j] = 0;
        for (int k = 0; k < cols; ++k)
          out[i * rows + j] += half[i * cols + k] * std::fabs(entry(j, k));
      }
  };
  double worst = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    double d[pts], w[9], v[pts], u[pts], y[M * M];
    double nd = 0, nw = 0;
    // Nonnegative inputs, some concentrated on one element, to push towards the worst case.
    for (double& e : d) e = std::fabs(uniform(rng)), nd += e * e;
    for (double& e : w) e = std::fabs(uniform(rng)), nw += e * e;
    if (trial % 2) {
      for (double& e : d) e = 0;
      d[rng() % pts] = 1;
      nd = 1;
    }
    abs_sandwich(d, v, a, a, [](int i, int j) { return bt<M, double>(i, j); });
    abs_sandwich(w, u, a, 3, [](int i, int j) { return g<M, double>(i, j); });
    for (int xi = 0; xi < pts; ++xi) v[xi] *= u[xi];
    abs_sandwich(v, y, M, a, [](int i, int j) { return at<M, double>(i, j); });
    double ny = 0;
    for (double e : y) ny += e * e;
    worst = std::max(worst, std::sqrt(ny / (nd * nw)));
  }
  return worst;
}

TEST(WinogradTransform, GrowthFactorBoundsTheAbsoluteChain) {
  std::mt19937_64 rng(testing::run_seed() + 2);
  const double f2 = worst_absolute_growth<2>(rng), f4 = worst_absolute_growth<4>(rng);
  std::cout << "absolute chain growth: F(2,3) " << f2 << " <= " << growth_factor<2>() << ", F(4,3) "
            << f4 << " <= " << growth_factor<4>() << "\n";
  EXPECT_LE(f2, growth_factor<2>());
  EXPECT_LE(f4, growth_factor<4>());
  // The bound is not vacuous: within a small factor of what the transforms can do.
  EXPECT_GE(f2, growth_factor<2>() / 8);
  EXPECT_GE(f4, growth_factor<4>() / 8);
}

TEST(WinogradTransform, TilesCoverTheExtent) {
  EXPECT_EQ(tiles_along(1, 4), 1);
  EXPECT_EQ(tiles_along(8, 4), 2);
  EXPECT_EQ(tiles_along(9, 4), 3);
  EXPECT_EQ(tiles_along(7, 2), 4);
}

}  // namespace
}  // namespace convlab::winograd
