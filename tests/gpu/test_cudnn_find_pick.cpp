// cudnn.find's pick over cuDNN's perf results, on the host: a fp32 plan never takes a result
// whose math type may use tensor cores (TF32), whatever its speed; the budget and failed
// results are respected; TF32 permission widens the choice but never to the fp16
// down-conversion. The structs are cuDNN's own, filled by hand; no GPU and no cuDNN call.
#include <gtest/gtest.h>

#include <vector>

#include "cuda/cudnn/cudnn_find_pick.hpp"

namespace convlab {
namespace {

using cuda::FindPick;
using cuda::pick_find_result;

cudnnConvolutionFwdAlgoPerf_t fwd(cudnnConvolutionFwdAlgo_t algo, float ms, std::size_t memory,
                                  cudnnMathType_t math,
                                  cudnnStatus_t status = CUDNN_STATUS_SUCCESS) {
  cudnnConvolutionFwdAlgoPerf_t r{};
  r.algo = algo, r.status = status, r.time = ms, r.memory = memory, r.mathType = math;
  r.determinism = CUDNN_DETERMINISTIC;
  return r;
}

constexpr std::size_t kBudget = 1 << 20;

TEST(CudnnFindPick, Fp32RefusesTensorOpAndDefaultMath) {
  const std::vector<cudnnConvolutionFwdAlgoPerf_t> results = {
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 0.1f, 0, CUDNN_TENSOR_OP_MATH),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 0.2f, 0, CUDNN_DEFAULT_MATH),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_FFT, 0.3f, 0, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, 0.4f, 0, CUDNN_FMA_MATH),
  };
  const FindPick p = pick_find_result(results.data(), int(results.size()), kBudget, false);
  EXPECT_EQ(p.algo, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD);
  EXPECT_EQ(p.math, CUDNN_FMA_MATH);
  EXPECT_FLOAT_EQ(p.time_ms, 0.4f);
  EXPECT_EQ(p.refused_math, 3);
  EXPECT_EQ(p.tried, 4);
}

TEST(CudnnFindPick, NothingInFp32MeansNoPick) {
  const std::vector<cudnnConvolutionFwdAlgoPerf_t> results = {
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 0.1f, 0, CUDNN_TENSOR_OP_MATH),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 0.2f, 0, CUDNN_DEFAULT_MATH),
  };
  const FindPick p = pick_find_result(results.data(), int(results.size()), kBudget, false);
  EXPECT_EQ(p.algo, -1);
  EXPECT_EQ(p.refused_math, 2);
}

TEST(CudnnFindPick, Tf32AllowedTakesTensorOpsButNeverFp16Conversion) {
  const std::vector<cudnnConvolutionFwdAlgoPerf_t> results = {
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_FFT, 0.05f, 0, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 0.1f, 0, CUDNN_TENSOR_OP_MATH),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, 0.4f, 0, CUDNN_FMA_MATH),
  };
  const FindPick p = pick_find_result(results.data(), int(results.size()), kBudget, true);
  EXPECT_EQ(p.algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  EXPECT_EQ(p.math, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(p.refused_math, 1);
}

TEST(CudnnFindPick, BudgetAndFailuresAreSkippedAndTheFastestWins) {
  const std::vector<cudnnConvolutionFwdAlgoPerf_t> results = {
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_FFT, 0.01f, 0, CUDNN_FMA_MATH, CUDNN_STATUS_NOT_SUPPORTED),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, 0.02f, kBudget + 1, CUDNN_FMA_MATH),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 0.5f, kBudget, CUDNN_FMA_MATH),
      fwd(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, 0.3f, 16, CUDNN_FMA_MATH),  // out of time order
  };
  const FindPick p = pick_find_result(results.data(), int(results.size()), kBudget, false);
  EXPECT_EQ(p.algo, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT);
  EXPECT_EQ(p.workspace, 16u);
  EXPECT_EQ(p.refused_math, 0);
}

TEST(CudnnFindPick, BackwardStructsWork) {
  cudnnConvolutionBwdFilterAlgoPerf_t r[2] = {};
  r[0].algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, r[0].time = 0.1f;
  r[0].mathType = CUDNN_DEFAULT_MATH, r[0].status = CUDNN_STATUS_SUCCESS;
  r[1].algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, r[1].time = 0.2f;
  r[1].mathType = CUDNN_FMA_MATH, r[1].status = CUDNN_STATUS_SUCCESS;
  r[1].determinism = CUDNN_NON_DETERMINISTIC;
  const FindPick p = pick_find_result(r, 2, kBudget, false);
  EXPECT_EQ(p.algo, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0);
  EXPECT_FALSE(p.deterministic);
}

}  // namespace
}  // namespace convlab
