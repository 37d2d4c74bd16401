// The Toom-Cook construction of strategy/winograd_toom_cook.hpp: its F(2,3) and F(4,3) are the
// hand-written tables of winograd_transform.hpp (up to the signs a transform point's row of G may
// trade with the same row of B^T and column of A^T), with the same growth factor, and its larger
// tiles (F(6,3), F(4,5), F(2,7)) compute the direct correlation, so the bounds built on them are
// bounds of a working algorithm.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "convlab/descriptor.hpp"
#include "strategy/winograd_host.hpp"
#include "strategy/winograd_toom_cook.hpp"
#include "strategy/winograd_transform.hpp"
#include "support/conv_tester.hpp"

namespace convlab::winograd {
namespace {

TEST(WinogradToomCook, PointsAreTheSmallOnesFirst) {
  EXPECT_EQ(toom_cook_points(7), (std::vector<double>{0, 1, -1, 2, -2, 0.5, -0.5}));
  EXPECT_EQ(toom_cook_points(9), (std::vector<double>{0, 1, -1, 2, -2, 0.5, -0.5, 3, -3}));
}

// Entry by entry up to sign: a transform point's column of A^T, row of G and row of B^T may
// trade signs (the construction's and Lavin's differ there); that the signs multiply out is
// the correlation test below, run on these tiles too.
template <int M>
void expect_hand_tables(const ToomCook& t) {
  ASSERT_EQ(t.alpha, Tile<M>::alpha);
  for (int i = 0; i < t.alpha; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double hand = g<M, double>(i, j);
      EXPECT_NEAR(std::fabs(t.g_at(i, j)), std::fabs(hand), 1e-15) << "G " << i << "," << j;
    }
    for (int k = 0; k < t.alpha; ++k) {
      const double hand = bt<M, double>(i, k);
      EXPECT_EQ(std::fabs(t.bt_at(i, k)), std::fabs(hand)) << "B^T " << i << "," << k;
    }
    for (int k = 0; k < M; ++k) {
      const double hand = at<M, double>(k, i);
      EXPECT_EQ(std::fabs(t.at_at(k, i)), std::fabs(hand)) << "A^T " << k << "," << i;
    }
  }
  EXPECT_NEAR(growth_factor(t), growth_factor<M>(), 1e-9 * growth_factor<M>());
}

TEST(WinogradToomCook, ReproducesTheHandWrittenTables) {
  expect_hand_tables<2>(toom_cook(2, 3));
  expect_hand_tables<4>(toom_cook(4, 3));
}

// y[o] = sum_a d[o + a] g[a] through the 1-D algorithm, against the direct sum.
void expect_correlation(const ToomCook& t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> d(t.alpha), w(t.r), gw(t.alpha, 0.0), bd(t.alpha, 0.0);
  for (double& e : d) e = uniform(rng);
  for (double& e : w) e = uniform(rng);
  for (int i = 0; i < t.alpha; ++i) {
    for (int j = 0; j < t.r; ++j) gw[i] += t.g_at(i, j) * w[j];
    for (int k = 0; k < t.alpha; ++k) bd[i] += t.bt_at(i, k) * d[k];
  }
  for (int o = 0; o < t.m; ++o) {
    double y = 0, direct = 0, magnitude = 0;
    for (int i = 0; i < t.alpha; ++i) y += t.at_at(o, i) * gw[i] * bd[i];
    for (int a = 0; a < t.r; ++a)
      direct += d[o + a] * w[a], magnitude += std::fabs(d[o + a] * w[a]);
    EXPECT_NEAR(y, direct, 1e-12 * growth_factor(t) * magnitude)
        << "F(" << t.m << "," << t.r << ") output " << o;
  }
}

TEST(WinogradToomCook, LargerTilesComputeTheCorrelation) {
  std::mt19937_64 rng(testing::run_seed());
  for (const auto& [m, r] :
       {std::pair{2, 3}, {4, 3}, {6, 3}, {4, 5}, {2, 5}, {2, 7}, {3, 2}, {1, 4}}) {
    const ToomCook t = toom_cook(m, r);
    for (int trial = 0; trial < 50; ++trial) expect_correlation(t, rng);
  }
}

TEST(WinogradToomCook, GrowthRisesWithTheTile) {
  // Larger points enter the larger tiles: each step of alpha costs more amplification.
  const double f23 = growth_factor(toom_cook(2, 3)), f43 = growth_factor(toom_cook(4, 3)),
               f63 = growth_factor(toom_cook(6, 3));
  EXPECT_LT(f23, f43);
  EXPECT_LT(f43, f63);
  EXPECT_LT(growth_factor(toom_cook(2, 5)), growth_factor(toom_cook(4, 5)));
  std::cout << "beta: F(2,3) " << f23 << ", F(4,3) " << f43 << ", F(6,3) " << f63 << ", F(4,5) "
            << growth_factor(toom_cook(4, 5)) << ", F(2,7) " << growth_factor(toom_cook(2, 7))
            << "\n";
}

// A vendor's Winograd is bounded as the largest tile: never tighter than our own tiles' bounds
// on the same 3x3 problem, and growing with the kernel (5x5 tiles amplify more).
TEST(WinogradToomCook, VendorBoundCoversOurTiles) {
  const ConvProblem p3 = parse_descriptor("mb2ic16ih14oc16oh14kh3ph1").problem;
  const ConvProblem p5 = parse_descriptor("mb2ic16ih14oc16oh14kh5ph2").problem;
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    const double vendor = vendor_winograd_error_bound(p3, pass, 1).factor;
    EXPECT_GT(vendor, winograd_error_bound(p3, pass, 4, 1).factor) << to_string(pass);
    EXPECT_GT(vendor, winograd_error_bound(p3, pass, 2, 1).factor) << to_string(pass);
    EXPECT_GT(vendor_winograd_error_bound(p5, pass, 1).factor, vendor) << to_string(pass);
  }
}

}  // namespace
}  // namespace convlab::winograd
