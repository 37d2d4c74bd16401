// The metadata a sweep records about its machine, from the texts the kernel gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "output/context.hpp"
#include "output/machine.hpp"

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

// The head of /proc/cpuinfo on a KVM guest whose family and model name no real CPU.
const char* const kCpuinfo =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 167\n"
    "model name\t: Intel(R) Xeon(R) Processor\nstepping\t: 1\n"
    "flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512dq avx512bw avx512vl avx512_vnni "
    "avx512_bf16 avx512_fp16 amx_tile amx_bf16 avx512vbmi\n"
    "processor\t: 1\nflags\t\t: fpu\n";

TEST(ConvbenchContext, CpuModelIdentityAndFeaturesFromCpuinfo) {
  EXPECT_EQ(cpu_model_in(kCpuinfo), "Intel(R) Xeon(R) Processor");
  // "model name" is not "model": the identity takes the line whose key is exactly "model".
  EXPECT_EQ(cpu_identity_in(kCpuinfo), "family 6, model 167, stepping 1");
  // The first CPU's flags, in the fixed order, only those the kernels choose by.
  EXPECT_EQ(cpu_features_in(kCpuinfo),
            "sse4_2 avx avx2 fma avx512f avx512bw avx512vl avx512dq avx512_vnni avx512_bf16 "
            "avx512_fp16 amx_tile amx_bf16");
  EXPECT_EQ(cpu_model_in("processor\t: 0\nModel\t\t: Raspberry Pi 4\n"), "Raspberry Pi 4");
  EXPECT_EQ(cpu_identity_in("processor\t: 0\n"), "unknown");
  EXPECT_EQ(cpu_features_in("processor\t: 0\n"), "unknown");
  EXPECT_EQ(cpu_features_in("flags\t\t: fpu sse2\n"), "none of sse4_2, avx, avx2, avx512f");
  EXPECT_EQ(cpu_model_in(""), "unknown");
}

TEST(ConvbenchContext, CachesFromSysfsInBinaryUnits) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "convbench_context_cache";
  fs::remove_all(dir);
  auto index = [&](int i, const char* level, const char* type, const char* size,
                   const char* shared) {
    const fs::path d = dir / ("index" + std::to_string(i));
    fs::create_directories(d);
    std::ofstream(d / "level") << level << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
    std::ofstream(d / "shared_cpu_list") << shared << "\n";
  };
  index(0, "1", "Data", "48K", "0");
  index(1, "1", "Instruction", "64K", "0");
  index(2, "2", "Unified", "2048K", "0");
  index(3, "3", "Unified", "491520K", "0-1");
  EXPECT_EQ(cpu_caches_in(dir), "L1d 48 KiB, L2 2 MiB, L3 480 MiB (2 CPUs)");
  index(3, "3", "Unified", "1280K", "0-3,8,10-11");
  EXPECT_EQ(cpu_caches_in(dir), "L1d 48 KiB, L2 2 MiB, L3 1280 KiB (7 CPUs)");
  // Sizes sysfs would not write are shown as written, never a crash.
  index(3, "3", "Unified", "99999999999999999999999K", "0-x");
  EXPECT_EQ(cpu_caches_in(dir), "L1d 48 KiB, L2 2 MiB, L3 99999999999999999999999K");
  fs::remove_all(dir);
  EXPECT_EQ(cpu_caches_in(dir), "unknown");
}

TEST(ConvbenchContext, TransparentHugePageModeIsTheMarkedOne) {
  EXPECT_EQ(transparent_hugepage_mode("always [madvise] never\n"), "madvise");
  EXPECT_EQ(transparent_hugepage_mode("[always] madvise never\n"), "always");
  EXPECT_EQ(transparent_hugepage_mode("never\n"), "never");
  EXPECT_EQ(transparent_hugepage_mode(""), "unknown");
}

TEST(ConvbenchContext, LibraryEnvironmentKeepsWhatTheLibrariesRead) {
  EXPECT_EQ(
      library_environment({"HOME=/root", "OMP_PROC_BIND=close", "ONEDNN_MAX_CPU_ISA=AVX2",
                           "GLIBC_TUNABLES=glibc.malloc.hugetlb=1", "CUDA_VISIBLE_DEVICES=1",
                           "CONVLAB_NUM_THREADS=2", "OPENBLAS_NUM_THREADS=1", "PATH=/usr/bin"}),
      "GLIBC_TUNABLES=glibc.malloc.hugetlb=1; OMP_PROC_BIND=close; "
      "ONEDNN_MAX_CPU_ISA=AVX2; OPENBLAS_NUM_THREADS=1");
  EXPECT_EQ(library_environment({"HOME=/root", "CUDA_VISIBLE_DEVICES=0",
                                 "CUDA_HOME=/usr/local/cuda", "CUDA_PATH=/usr/local/cuda"}),
            "none");
  EXPECT_EQ(library_environment({"CUDA_LAUNCH_BLOCKING=1"}), "CUDA_LAUNCH_BLOCKING=1");
  EXPECT_EQ(library_environment({}), "none");
}

}  // namespace
}  // namespace convbench
