#pragma once
// Winograd minimal filtering F(m, 3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks", CVPR 2016): the transform matrices and the tile transforms that cpu.winograd and
// cuda.winograd both call, plus the growth factor their error bound is built from.
//
// One dimension: m outputs of the correlation y[i] = sum_{a<3} d[i + a] g[a] of an input tile
// d of alpha = m + 2 elements are
//
//   y = A^T [ (G g) .* (B^T d) ]                                    (the defining identity)
//
// with B^T alpha x alpha, G alpha x 3, A^T m x alpha. The matrices come from evaluating the
// polynomials g(x) and d(x) at alpha points (Toom-Cook): F(2,3) at 0, 1, -1, infinity;
// F(4,3) at 0, 1, -1, 2, -2, infinity. Two dimensions nest the 1-D algorithm (Kronecker
// product): Y = A^T [ (G g G^T) .* (B^T d B) ] A for an alpha x alpha tile and a 3x3 filter.
//
// Adjoints (backward-filter). Y is linear in g, so <dY, Y> = <A dY A^T, U .* V> with
// U = G g G^T, V = B^T d B, which gives dg = G^T [ (A dY A^T) .* (B^T d B) ] G: the filter
// gradient of one tile, summed over tiles, images and (per transform point) channels.
//
// The matrices are exact small rationals; they are stored in double and rounded once to the
// working type, so the float tables are the correctly rounded coefficients (1/6, 1/12, 1/24 are
// the only inexact ones).

#include <cmath>
#include <cstdint>

#include "hd.hpp"

// Complete unrolling of the fixed-size tile loops (the trip counts are template constants).
// nvcc's front end reads both of its passes with CUDA's pragma (it defines __GNUC__ but does
// not know GCC's).
#if defined(__CUDACC__)
#define CONVLAB_UNROLL _Pragma("unroll")
#elif defined(__clang__)
#define CONVLAB_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define CONVLAB_UNROLL _Pragma("GCC unroll 16")
#else
#define CONVLAB_UNROLL
#endif

namespace convlab::winograd {

/// Tile sizes of F(m, 3): m outputs, alpha = m + 2 inputs per dimension.
template <int M>
struct Tile {
  static_assert(M == 2 || M == 4, "F(2,3) and F(4,3) are implemented");
  static constexpr int m = M;
  static constexpr int r = 3;
  static constexpr int alpha = M + 2;
  static constexpr int points = alpha * alpha;  ///< transform points of a 2-D tile
};

// The matrices are written once, in double (specialised below); any other precision reads
// them rounded from there, so float and double cannot disagree on an entry.
/// B^T (alpha x alpha), row-major.
template <int M, class T>
CONVLAB_HD T bt(int i, int j) {
  static_assert(Tile<M>::m == M && sizeof(T) != sizeof(double), "no B^T in double for this M");
  return static_cast<T>(bt<M, double>(i, j));
}
/// G (alpha x 3), row-major.
template <int M, class T>
CONVLAB_HD T g(int i, int j) {
  static_assert(Tile<M>::m == M && sizeof(T) != sizeof(double), "no G in double for this M");
  return static_cast<T>(g<M, double>(i, j));
}
/// A^T (m x alpha), row-major.
template <int M, class T>
CONVLAB_HD T at(int i, int j) {
  static_assert(Tile<M>::m == M && sizeof(T) != sizeof(double), "no A^T in double for this M");
  return static_cast<T>(at<M, double>(i, j));
}

template <>
CONVLAB_HD double bt<2, double>(int i, int j) {
  static constexpr double t[16] = {1, 0, -1, 0,  //
                            0, 1, 1,  0,  //
                            0, -1, 1, 0,  //
                            0, 1, 0,  -1};
  return t[i * 4 + j];
}
template <>
CONVLAB_HD double g<2, double>(int i, int j) {
  static constexpr double t[12] = {1,   0,    0,    //
                            0.5, 0.5,  0.5,  //
                            0.5, -0.5, 0.5,  //
                            0,   0,    1};
  return t[i * 3 + j];
}
template <>
CONVLAB_HD double at<2, double>(int i, int j) {
  static constexpr double t[8] = {1, 1, 1, 0,  //
                           0, 1, -1, -1};
  return t[i * 4 + j];
}

template <>
CONVLAB_HD double bt<4, double>(int i, int j) {
  static constexpr double t[36] = {4, 0,  -5, 0,  1, 0,  //
                            0, -4, -4, 1,  1, 0,  //
                            0, 4,  -4, -1, 1, 0,  //
                            0, -2, -1, 2,  1, 0,  //
                            0, 2,  -1, -2, 1, 0,  //
                            0, 4,  0,  -5, 0, 1};
  return t[i * 6 + j];
}
template <>
CONVLAB_HD double g<4, double>(int i, int j) {
  static constexpr double t[18] = {1.0 / 4,   0,          0,           //
                            -1.0 / 6,  -1.0 / 6,   -1.0 / 6,    //
                            -1.0 / 6,  1.0 / 6,    -1.0 / 6,    //
                            1.0 / 24,  1.0 / 12,   1.0 / 6,     //
                            1.0 / 24,  -1.0 / 12,  1.0 / 6,     //
                            0,         0,          1};
  return t[i * 3 + j];
}
template <>
CONVLAB_HD double at<4, double>(int i, int j) {
  static constexpr double t[24] = {1, 1, 1,  1, 1,  0,  //
                            0, 1, -1, 2, -2, 0,  //
                            0, 1, 1,  4, 4,  0,  //
                            0, 1, -1, 8, -8, 1};
  return t[i * 6 + j];
}

// The five maps a tile goes through, each out = L in L^T for one matrix L (rows x cols) given
// by its entry function. Tiles are row-major, `in` cols x cols, `out` rows x rows.
// The loops are unrolled completely so that the entries become constants instead of table
// loads. Zero entries are still multiplied: skipping them was faster on the CPU, but without
// -ffast-math 0 * x is kept (NaN for an infinite x), and that is what makes a non-finite input
// spread over its whole tile, the behaviour tests/cpu/test_nonfinite.cpp checks.
template <int Rows, int Inner, int Width, class T, class Entry>
CONVLAB_HD void left_product(Entry entry, const T* in, int in_inner, int in_col, T* out,
                             int out_row, int out_col) {
  // out(i, j) = sum over k of L(i, k) in(k, j), each operand read through its strides.
  CONVLAB_UNROLL
  for (int i = 0; i < Rows; ++i)
    CONVLAB_UNROLL
    for (int j = 0; j < Width; ++j) {
      T s{};
      CONVLAB_UNROLL
      for (int k = 0; k < Inner; ++k) s += entry(i, k) * in[k * in_inner + j * in_col];
      out[i * out_row + j * out_col] = s;
    }
}

template <int Rows, int Cols, class T, class Entry>
CONVLAB_HD void sandwich(const T* in, T* out, Entry entry) {
  T half[Rows * Cols];  // L in, row-major
  left_product<Rows, Cols, Cols>(entry, in, Cols, 1, half, Cols, 1);
  // out = half L^T = (L half^T)^T: the same product with half read and out written transposed.
  left_product<Rows, Cols, Rows>(entry, half, 1, Cols, out, 1, Rows);
}

// Entry functors (lambdas would need nvcc's --extended-lambda in kernels).
template <int M, class T>
struct BtEntry {
  CONVLAB_HD T operator()(int i, int j) const { return bt<M, T>(i, j); }
};
template <int M, class T>
struct GEntry {
  CONVLAB_HD T operator()(int i, int j) const { return g<M, T>(i, j); }
};
template <int M, class T>
struct GtEntry {  // G^T (3 x alpha)
  CONVLAB_HD T operator()(int i, int j) const { return g<M, T>(j, i); }
};
template <int M, class T>
struct AtEntry {
  CONVLAB_HD T operator()(int i, int j) const { return at<M, T>(i, j); }
};
template <int M, class T>
struct AEntry {  // A (alpha x m)
  CONVLAB_HD T operator()(int i, int j) const { return at<M, T>(j, i); }
};

/// V = B^T d B: an alpha x alpha input tile to its transform points.
template <int M, class T>
CONVLAB_HD void input_transform(const T* d, T* v) {
  sandwich<Tile<M>::alpha, Tile<M>::alpha>(d, v, BtEntry<M, T>{});
}
/// U = G g G^T: a 3x3 filter to its alpha x alpha transform points.
template <int M, class T>
CONVLAB_HD void filter_transform(const T* w, T* u) {
  sandwich<Tile<M>::alpha, 3>(w, u, GEntry<M, T>{});
}
/// Y = A^T P A: the alpha x alpha products back to an m x m output tile.
template <int M, class T>
CONVLAB_HD void output_transform(const T* p, T* y) {
  sandwich<M, Tile<M>::alpha>(p, y, AtEntry<M, T>{});
}
/// A dY A^T: an m x m output-gradient tile to the transform points (adjoint of
/// output_transform).
template <int M, class T>
CONVLAB_HD void output_adjoint(const T* dy, T* p) {
  sandwich<Tile<M>::alpha, M>(dy, p, AEntry<M, T>{});
}
/// dg = G^T P G: transform points back to a 3x3 filter gradient (adjoint of filter_transform).
template <int M, class T>
CONVLAB_HD void filter_adjoint(const T* p, T* dw) {
  sandwich<3, Tile<M>::alpha>(p, dw, GtEntry<M, T>{});
}

/// Tiles of m along an extent: ceil(extent / m).
CONVLAB_HD int64_t tiles_along(int64_t extent, int m) { return (extent + m - 1) / m; }

// ---------------------------------------------------------------------------------------------
// Growth factor (host). Rounding a tile's computation perturbs it by at most gamma times the
// same computation on absolute values, vec|E| <= gamma (|A^T| x |A^T|) [ (|G| x |G|)|g| .*
// (|B^T| x |B^T|)|d| ] (x: Kronecker product). Splitting the bracket by transform point
// xi = (i, j) and applying Cauchy-Schwarz to each factor gives
//   ||E||_2 <= gamma * beta * ||g||_2 ||d||_2,   beta = ( sum_i a_i g_i b_i )^2,
// with a_i = ||column i of A^T||_2, g_i = ||row i of G||_2, b_i = ||row i of B^T||_2 (the
// Kronecker structure makes the 2-D sum the square of the 1-D one). The adjoint chain of
// backward-filter, G^T [ (A dY A^T) .* (B^T d B) ] G, has the same three norms per point, so
// the same beta. beta(2) ~ 40, beta(4) ~ 674: F(4,3)'s larger points (+-2) cost a factor ~17.

/// beta(m) above.
template <int M>
inline double growth_factor() {
  constexpr int a = Tile<M>::alpha;
  double sum = 0;
  for (int i = 0; i < a; ++i) {
    double ai = 0, gi = 0, bi = 0;
    for (int k = 0; k < M; ++k) ai += at<M, double>(k, i) * at<M, double>(k, i);
    for (int k = 0; k < 3; ++k) gi += g<M, double>(i, k) * g<M, double>(i, k);
    for (int k = 0; k < a; ++k) bi += bt<M, double>(i, k) * bt<M, double>(i, k);
    sum += std::sqrt(ai * gi * bi);
  }
  return sum * sum;
}

}  // namespace convlab::winograd
