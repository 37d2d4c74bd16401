// The math modes on a GPU, read back from the libraries rather than from our settings: the
// shared cuBLAS handle is in CUBLAS_DEFAULT_MATH (fp32 SGEMM/CGEMM never use TF32 there), and
// cudnn.find's plan for each pass runs in CUDNN_FMA_MATH, unless CONVLAB_ALLOW_TF32=1. Skipped
// without a usable device.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include "convlab/config.hpp"
#include "convlab/registry.hpp"
#include "cuda/common/device.hpp"
#include "cuda/common/math_mode.hpp"
#include "support/conv_tester.hpp"
#if CONVLAB_HAVE_CUDNN
#include "cuda/cudnn/cudnn_common.hpp"
#include "cuda/cudnn/cudnn_find_pick.hpp"
#endif

namespace convlab {
namespace {

TEST(GpuMathModes, CublasHandleIsFp32) {
  const Support device = cuda::device_support(cuda::default_device_index());
  if (!device) GTEST_SKIP() << "no usable CUDA device: " << device.reason;
  cuda::CudaContext& context = cuda::device_context(cuda::default_device_index());
  cublasMath_t mode = CUBLAS_TF32_TENSOR_OP_MATH;
  ASSERT_EQ(cublasGetMathMode(context.cublas(), &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mode, cuda::allow_tf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
}

#if CONVLAB_HAVE_CUDNN
TEST(GpuMathModes, CudnnFindPicksFp32) {
  const Support device = cuda::device_support(cuda::default_device_index());
  if (!device) GTEST_SKIP() << "no usable CUDA device: " << device.reason;
  const Algorithm& find = registry().get("cudnn.find");
  if (!find.available()) GTEST_SKIP() << "cudnn.find: " << find.available().reason;
  ConvProblem p;  // ResNet-50 res3 3x3 at mb 8: tensor-core kernels exist and are fast here
  p.n = 8, p.c = 128, p.h = p.w = 28, p.k = 128, p.r = p.s = 3, p.pad_h = p.pad_w = 1;
  for (Pass pass : testing::all_passes()) {
    auto plan = find.plan(p, pass);
    const cudnnMathType_t math = cuda::cudnn_find_chosen_math(*plan);
    EXPECT_TRUE(cuda::cudnn_find_math_acceptable(math, cuda::allow_tf32()))
        << to_string(pass) << ": " << cuda::cudnn_math_type_name(math) << "; " << plan->info().describe();
    if (!cuda::allow_tf32()) {
      EXPECT_EQ(math, CUDNN_FMA_MATH) << plan->info().describe();
      EXPECT_EQ(plan->info().math_mode, MathMode::fp32) << plan->info().describe();
    }
  }
}
#endif

}  // namespace
}  // namespace convlab
