// The metadata a sweep records about its machine, from the texts the kernel gives.
#include <gtest/gtest.h>

#include "output/context.hpp"

namespace convbench {
namespace {

TEST(ConvbenchContext, DriverVersionFromEitherKernelModule) {
  // /proc/driver/nvidia/version's first line as the proprietary and the open module write it.
  EXPECT_EQ(nvidia_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  "
                                  "Tue Mar  5 22:23:56 UTC 2024"),
            "550.54.15");
  EXPECT_EQ(nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                  "580.159.04  Release Build  (dvs-builder@U16-I1-N08-02-3)"),
            "580.159.04");
  // A line that names no version is kept whole rather than guessed from.
  EXPECT_EQ(nvidia_driver_version("NVRM version: unknown"), "NVRM version: unknown");
  EXPECT_EQ(nvidia_driver_version("x86_64 2024"), "x86_64 2024");
}

}  // namespace
}  // namespace convbench
