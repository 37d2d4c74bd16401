// The device's two ceilings (copy bandwidth, SGEMM rate; cuda/common/ceilings.hpp), printed
// as one "CEILINGS ..." line that scripts/gpu_check puts beside its sweep, and checked for
// plausibility: positive and below what any current card reaches (an event timer that
// records nothing would give infinities). Run alone: it wants the device to itself.
#include <gtest/gtest.h>

#include <iostream>

#include "cuda/common/ceilings.hpp"
#include "cuda/common/device.hpp"

namespace convlab {
namespace {

TEST(GpuCeilings, Measure) {
  const Support device = cuda::device_support(cuda::default_device_index());
  if (!device) GTEST_SKIP() << "no usable CUDA device: " << device.reason;
  cuda::CudaContext& context = cuda::device_context(cuda::default_device_index());
  const std::size_t before = context.current_bytes();
  const cuda::Ceilings c = cuda::measure_ceilings(context);
  std::cout << "CEILINGS device=\"" << context.name() << "\" copy_gb_per_s=" << c.copy_gb_per_s
            << " sgemm_gflop_per_s=" << c.sgemm_gflop_per_s << " (" << c.describe() << ")\n";
  EXPECT_EQ(context.current_bytes(), before);  // everything it allocated is freed
  // H200: 4.8 TB/s HBM3e (a D2D copy moves each byte twice); fp32 FMA peak about 67 TFLOP/s
  // without tensor cores. The limits leave room for faster cards and TF32.
  EXPECT_GT(c.copy_gb_per_s, 10.0);
  EXPECT_LT(c.copy_gb_per_s, 30000.0);
  EXPECT_GT(c.sgemm_gflop_per_s, 100.0);
  EXPECT_LT(c.sgemm_gflop_per_s, 2.0e6);
}

}  // namespace
}  // namespace convlab
