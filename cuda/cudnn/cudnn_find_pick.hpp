#pragma once
// Which cudnnFind*AlgorithmEx result becomes cudnn.find's plan. Pure host logic over cuDNN's
// perf structs (no cuDNN call), so it is tested without a GPU.
//
// Math types (cuDNN 9, cudnnMathType_t): CUDNN_FMA_MATH restricts the kernels to FMA
// instructions, i.e. true fp32; CUDNN_DEFAULT_MATH permits TF32 tensor cores on Ampere and
// later; CUDNN_TENSOR_OP_MATH uses tensor cores; CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION may
// also convert fp32 data down to fp16. A result's mathType says which kind of kernel cuDNN
// timed, so a fp32 plan takes only CUDNN_FMA_MATH results: a DEFAULT_MATH result may have
// been timed with TF32 and would compare reduced precision against fp32 strategies.

#include <cudnn.h>

#include <cstddef>
#include <string>

#include "convlab/algorithm.hpp"

namespace convlab::cuda {

/// Whether a result of math type `type` may be picked: fp32 (TF32 not allowed) takes only
/// CUDNN_FMA_MATH; with TF32 allowed anything but the fp16 down-conversion.
inline bool cudnn_find_math_acceptable(cudnnMathType_t type, bool allow_tf32) {
  if (type == CUDNN_FMA_MATH) return true;
  if (!allow_tf32) return false;
  return type == CUDNN_DEFAULT_MATH || type == CUDNN_TENSOR_OP_MATH;
}

struct FindPick {
  int algo = -1;  ///< -1: nothing acceptable
  float time_ms = 0;
  std::size_t workspace = 0;
  std::size_t budget = 0;
  int tried = 0;
  int refused_math = 0;  ///< results that succeeded within the budget but in a refused math type
  bool deterministic = false;
  cudnnMathType_t math = CUDNN_FMA_MATH;
};

/// The fastest result that succeeded, fits `budget` and has an acceptable math type. `Perf`
/// is one of cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t.
template <typename Perf>
FindPick pick_find_result(const Perf* results, int count, std::size_t budget, bool allow_tf32) {
  FindPick pick;
  pick.budget = budget;
  pick.tried = count;
  for (int i = 0; i < count; ++i) {
    const Perf& r = results[i];
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > budget) continue;
    if (!cudnn_find_math_acceptable(r.mathType, allow_tf32)) {
      ++pick.refused_math;
      continue;
    }
    // cuDNN sorts by time; taking the minimum does not rely on it.
    if (pick.algo >= 0 && !(r.time < pick.time_ms)) continue;
    pick.algo = static_cast<int>(r.algo);
    pick.time_ms = r.time;
    pick.workspace = r.memory;
    pick.deterministic = r.determinism == CUDNN_DETERMINISTIC;
    pick.math = r.mathType;
  }
  return pick;
}

/// The math type the descriptor of a cudnn.find plan was set to (its pick's). Interim, until
/// the plan's own info carries the math mode: Error{invalid_argument} for any other plan.
cudnnMathType_t cudnn_find_chosen_math(const Plan& plan);

}  // namespace convlab::cuda
