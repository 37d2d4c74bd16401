#pragma once
// The Toom-Cook construction of Winograd's minimal filtering F(m, r) for any m and r, on the
// host, for error bounds: the transform matrices of an algorithm whose tables are not ours
// (a vendor's Winograd, whose tile the vendor does not publish) and their growth factor
// beta(m, r), the one winograd_transform.hpp defines for F(2,3) and F(4,3). Never compiled
// for a device; the kernels use the hand-written tables there, which this construction
// reproduces (tested).
//
// With alpha = m + r - 1 points p_0 .. p_{alpha-2} (finite) and infinity, the 1-D algorithm
// y = A^T [ (G g) .* (B^T d) ] has
//   A^T[k][i] = p_i^k,                          A^T[k][inf] = [k == m - 1]
//   G[i][j]   = p_i^j / prod_{l != i} (p_i - p_l),  G[inf][j] = [j == r - 1]
//   B^T[i][.] = the coefficients of prod_{l != i} (x - p_l)   (ascending powers),
//   B^T[inf][.] = the coefficients of prod_l (x - p_l)
// (Lagrange interpolation of the product polynomial at the finite points, the point at
// infinity supplying its leading coefficient). The points are taken small first: 0, 1, -1,
// 2, -2, 1/2, -1/2, 3, -3, 1/3, -1/3, ...; the first four and six are F(2,3)'s and F(4,3)'s
// points, 0, +-1, +-2, +-1/2 are those of F(6,3) and F(4,5) on 8 x 8 tiles.

#include <algorithm>
#include <cmath>
#include <vector>

namespace convlab::winograd {

/// F(m, r)'s matrices, row-major: at (m x alpha), g (alpha x r), bt (alpha x alpha).
struct ToomCook {
  int m = 0, r = 0, alpha = 0;
  std::vector<double> at, g, bt;
  double at_at(int k, int i) const { return at[k * alpha + i]; }
  double g_at(int i, int j) const { return g[i * r + j]; }
  double bt_at(int i, int k) const { return bt[i * alpha + k]; }
};

/// The first `count` interpolation points in the order above.
inline std::vector<double> toom_cook_points(int count) {
  std::vector<double> points;
  if (count > 0) points.push_back(0.0);
  for (int n = 1; static_cast<int>(points.size()) < count; ++n) {
    for (double p : {double(n), -double(n), 1.0 / n, -1.0 / n}) {
      if (static_cast<int>(points.size()) == count) break;
      if (std::find(points.begin(), points.end(), p) != points.end()) continue;  // 1/1 = 1
      points.push_back(p);
    }
  }
  return points;
}

/// The matrices of F(m, r), m >= 1, r >= 1.
inline ToomCook toom_cook(int m, int r) {
  ToomCook t;
  t.m = m;
  t.r = r;
  t.alpha = m + r - 1;
  const int a = t.alpha, finite = a - 1;
  const std::vector<double> p = toom_cook_points(finite);
  t.at.assign(static_cast<size_t>(m) * a, 0.0);
  t.g.assign(static_cast<size_t>(a) * r, 0.0);
  t.bt.assign(static_cast<size_t>(a) * a, 0.0);
  // Coefficients (ascending) of prod_{l != skip} (x - p_l); skip < 0 keeps every point.
  auto product = [&](int skip) {
    std::vector<double> c{1.0};
    for (int l = 0; l < finite; ++l) {
      if (l == skip) continue;
      std::vector<double> next(c.size() + 1, 0.0);
      for (size_t k = 0; k < c.size(); ++k) {
        next[k + 1] += c[k];
        next[k] -= p[l] * c[k];
      }
      c = next;
    }
    return c;
  };
  for (int i = 0; i < finite; ++i) {
    double denominator = 1.0, power = 1.0;
    for (int l = 0; l < finite; ++l) {
      if (l != i) denominator *= p[i] - p[l];
    }
    for (int k = 0; k < m; ++k, power *= p[i]) t.at[k * a + i] = power;
    power = 1.0;
    for (int j = 0; j < r; ++j, power *= p[i]) t.g[i * r + j] = power / denominator;
    const std::vector<double> c = product(i);
    for (size_t k = 0; k < c.size(); ++k) t.bt[i * a + static_cast<int>(k)] = c[k];
  }
  t.at[(m - 1) * a + (a - 1)] = 1.0;
  t.g[(a - 1) * r + (r - 1)] = 1.0;
  const std::vector<double> c = product(-1);
  for (size_t k = 0; k < c.size(); ++k) t.bt[(a - 1) * a + static_cast<int>(k)] = c[k];
  return t;
}

/// beta(m, r) = ( sum_i ||column i of A^T|| ||row i of G|| ||row i of B^T|| )^2: the 2-D
/// tile's rounding amplification (winograd_transform.hpp derives it for r = 3).
inline double growth_factor(const ToomCook& t) {
  double sum = 0;
  for (int i = 0; i < t.alpha; ++i) {
    double ai = 0, gi = 0, bi = 0;
    for (int k = 0; k < t.m; ++k) ai += t.at_at(k, i) * t.at_at(k, i);
    for (int j = 0; j < t.r; ++j) gi += t.g_at(i, j) * t.g_at(i, j);
    for (int k = 0; k < t.alpha; ++k) bi += t.bt_at(i, k) * t.bt_at(i, k);
    sum += std::sqrt(ai * gi * bi);
  }
  return sum * sum;
}

}  // namespace convlab::winograd
