#pragma once
/// \file
/// Error bounds and the comparison of an algorithm's output with the reference.
///
/// Two kinds of bound, both scaled by the problem rather than a loose constant:
///  - elementwise (direct strategies: im2col + GEMM, oneDNN, cuDNN's GEMM family): each
///    output is a sum of products computed in fp32, so |y_i - ref_i| <= factor * eps * A_i
///    with A_i = sum |a||b| over the products of output i (eps = 2^-24 rounding unit). A_i is
///    computed exactly by running the reference on |inputs|. For random data the observed
///    error is about eps * A_i; factor covers the spread and the reference's own rounding.
///  - normwise (FFT strategies): the FFT spreads rounding over a whole plane. For a circular
///    convolution of a and b of size M computed by FFT, ||e||_2 <= c * eps * log2(M) *
///    ||a||_2 ||b||_2 (the classic bound for FFT-based convolution); summing over the reduced
///    channels, each output plane p obeys ||e_p||_2 <= factor * eps * log2(M) *
///    sum_reduced ||a||_2 ||b||_2. Cropping and subsampling only drop elements of e.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convlab/problem.hpp"

namespace convlab {

struct ErrorBound {
  enum class Kind { elementwise, normwise };
  Kind kind = Kind::elementwise;
  double factor = 8.0;       ///< the constant in front of eps
  double log2_size = 0.0;    ///< normwise only: log2 of the transform size Hf*Wf
  /// Normwise: the multiple of eps that bounds a plane's error over its sum of norm
  /// products (the factor times log2 of the transform size, never less than the factor).
  double normwise_scale() const { return factor * std::max(log2_size, 1.0); }
  std::string describe() const;
};

/// The outcome of a comparison with the reference.
struct AccuracyReport {
  double max_abs_err = 0;   ///< max_i |y_i - ref_i|
  double max_rel_err = 0;   ///< max_i |y_i - ref_i| / A_i  (A_i = sum |a||b| of output i)
  double worst_ratio = 0;   ///< largest error / bound over the elements (or planes): <= 1 passes
  int64_t nonfinite = 0;    ///< outputs that are NaN or Inf where the reference is finite
  int64_t checked = 0;      ///< outputs compared: all of them, or the sampled ones
  /// Outputs where the reference is NaN or Inf and the output is not the same (a finite
  /// value, NaN for an infinity, the other infinity): IEEE propagation was lost.
  int64_t nonfinite_mismatch = 0;
  /// Outputs that are NaN or Inf exactly where the reference is (not counted in the errors).
  int64_t nonfinite_matched = 0;
  bool within_bound = true;
  std::string detail;       ///< where the worst element is, for messages
};

/// Host copies of the three tensors of a problem (x, w, y), whatever their roles in a pass.
struct HostTensors {
  std::vector<float> x, w, y;
  /// The output of the pass (y, x or w by role). Inline: the core's harness uses it, and
  /// the rest of this file is defined by convlab::eval, which the core must not need.
  std::vector<float>& output(Pass pass) {
    return pass == Pass::forward ? y : pass == Pass::backward_data ? x : w;
  }
  const std::vector<float>& output(Pass pass) const {
    return pass == Pass::forward ? y : pass == Pass::backward_data ? x : w;
  }
};

/// How inputs are filled.
enum class Fill {
  uniform,   ///< uniform in [-1, 1)
  integers,  ///< small integers (benchdnn's trick): sums are exact in fp32 and double alike,
             ///< so direct strategies must match the reference bit for bit
};

/// Tensors sized for the problem: the pass's inputs filled from `seed`, its output poisoned
/// with NaN so an element the algorithm does not write fails the comparison.
HostTensors make_inputs(const ConvProblem& problem, Pass pass, uint64_t seed,
                        Fill fill = Fill::uniform);

/// Runs the reference on the inputs in `tensors` and compares `result` (the algorithm's
/// output) with it under `bound`.
AccuracyReport compare_with_reference(const ConvProblem& problem, Pass pass,
                                      const HostTensors& inputs,
                                      const std::vector<float>& result, const ErrorBound& bound);

/// How much of each output a check compares with the reference. A full check recomputes the
/// whole output with the reference (about 0.65 G multiply-adds/s on one core: hours for a
/// network at batch 32); a sampled one recomputes `samples` elements chosen at random,
/// each exactly in double, and holds each to the same bound as the full check.
struct CheckScope {
  enum class Kind {
    automatic,  ///< full up to kFullCheckMacs multiply-adds in the pass, sampled above
    full,       ///< every output element
    sampled,    ///< `samples` output elements per output tensor, seeded
  };
  static constexpr int64_t kDefaultSamples = 1000;
  /// The largest pass `automatic` still checks in full: 2^28 multiply-adds, under a second
  /// of the reference.
  static constexpr int64_t kFullCheckMacs = int64_t{1} << 28;
  Kind kind = Kind::automatic;
  int64_t samples = kDefaultSamples;  ///< sampled, and automatic when it samples
  /// Whether `pass` of `problem` is checked in full under this scope.
  bool full(const ConvProblem& problem, Pass pass) const;
  /// "auto", "full" or "sampled:N": the text parse_check_scope() reads back.
  std::string describe() const;
};

/// Parses a --check value: "" or "auto", "full", "sampled" (kDefaultSamples), "sampled:N"
/// (N >= 1). Throws Error{invalid_argument} quoting the text and what is accepted.
CheckScope parse_check_scope(std::string_view text);

/// The output elements a sampled check compares: min(count, size) distinct flat indices in
/// [0, size), uniformly at random from `seed`, ascending.
std::vector<int64_t> sampled_indices(int64_t size, int64_t count, uint64_t seed);

/// Compares `result` with the reference at sampled_indices(output size, samples, seed) only,
/// the reference evaluated at each of them exactly in double (cpu_reference's *_at). The
/// elementwise bound applies to each sampled element as in the full check; the normwise one
/// to the 2-norm of each plane's sampled errors, which cannot exceed the whole plane's.
AccuracyReport compare_sampled_with_reference(const ConvProblem& problem, Pass pass,
                                              const HostTensors& inputs,
                                              const std::vector<float>& result,
                                              const ErrorBound& bound, int64_t samples,
                                              uint64_t seed);

/// The full or the sampled comparison, as `scope` says for this problem and pass.
AccuracyReport check_with_reference(const ConvProblem& problem, Pass pass,
                                    const HostTensors& inputs, const std::vector<float>& result,
                                    const ErrorBound& bound, const CheckScope& scope,
                                    uint64_t seed);

}  // namespace convlab
