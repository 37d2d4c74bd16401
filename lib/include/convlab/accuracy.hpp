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

#include <cstdint>
#include <string>
#include <vector>

#include "convlab/problem.hpp"

namespace convlab {

struct ErrorBound {
  enum class Kind { elementwise, normwise };
  Kind kind = Kind::elementwise;
  double factor = 8.0;       ///< the constant in front of eps
  double log2_size = 0.0;    ///< normwise only: log2 of the transform size Hf*Wf
  std::string describe() const;
};

/// The outcome of a comparison with the reference.
struct AccuracyReport {
  double max_abs_err = 0;   ///< max_i |y_i - ref_i|
  double max_rel_err = 0;   ///< max_i |y_i - ref_i| / A_i  (A_i = sum |a||b| of output i)
  double worst_ratio = 0;   ///< largest error / bound over the elements (or planes): <= 1 passes
  int64_t nonfinite = 0;    ///< outputs that are NaN or Inf where the reference is finite
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

}  // namespace convlab
