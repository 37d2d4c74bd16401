// cuda.fft's fused crop hands cuFFT an LTO-IR fatbin and a symbol name; cuFFT links them into
// its C2R kernel with nvJitLink when the plan is made, on a GPU. nvJitLink itself needs no
// device, so this links the very bytes the plan embeds the same way, here: they must be
// LTO-IR the linker accepts for sm_90 (the lent GPUs) and define the named function with the
// signature cuFFT calls (a PTX kernel that calls it through cufftJITCallbackStoreR,
// crop_callback_caller.cu). A caller of any other name must fail to link, so the check can
// fail. What it cannot check: that cuFFT accepts the callback and calls it as documented;
// the GPU tests run crop=fused against the reference for that.
#include <gtest/gtest.h>
#include <nvJitLink.h>

#include <cstddef>
#include <string>
#include <vector>

#include "cuda/fft/fft_crop_callback.hpp"

namespace convlab::testing {
extern const unsigned char kCropCallbackCallerPtx[];
extern const std::size_t kCropCallbackCallerPtx_size;
}  // namespace convlab::testing

namespace convlab {
namespace {

// Links the embedded callback with `ptx`; returns nvJitLink's status, its log in *log.
nvJitLinkResult link_with(const std::string& ptx, std::string* log) {
  nvJitLinkHandle handle = nullptr;
  const std::string arch = "-arch=sm_" + std::to_string(CONVLAB_LINK_ARCH);
  const char* options[] = {arch.c_str(), "-lto"};
  nvJitLinkResult r = nvJitLinkCreate(&handle, 2, options);
  if (r != NVJITLINK_SUCCESS) return r;
  r = nvJitLinkAddData(handle, NVJITLINK_INPUT_FATBIN, cuda::kFftCropCallbackLto,
                       cuda::kFftCropCallbackLto_size, "fft_crop_callback");
  if (r == NVJITLINK_SUCCESS) {
    r = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "caller");
  }
  if (r == NVJITLINK_SUCCESS) r = nvJitLinkComplete(handle);
  std::size_t size = 0;
  if (nvJitLinkGetErrorLogSize(handle, &size) == NVJITLINK_SUCCESS && size > 0) {
    std::vector<char> text(size + 1, '\0');
    nvJitLinkGetErrorLog(handle, text.data());
    *log = text.data();
  }
  nvJitLinkDestroy(&handle);
  return r;
}

std::string caller_ptx() {
  return std::string(reinterpret_cast<const char*>(testing::kCropCallbackCallerPtx),
                     testing::kCropCallbackCallerPtx_size);
}

TEST(CudaFftCropCallback, EmbeddedLtoIrLinksUnderItsName) {
  ASSERT_GT(cuda::kFftCropCallbackLto_size, 0u);
  const std::string ptx = caller_ptx();
  ASSERT_NE(ptx.find(cuda::kFftCropCallbackSymbol), std::string::npos)
      << "the caller does not call " << cuda::kFftCropCallbackSymbol;
  std::string log;
  EXPECT_EQ(link_with(ptx, &log), NVJITLINK_SUCCESS) << log;
}

TEST(CudaFftCropCallback, AnotherNameDoesNotLink) {
  std::string ptx = caller_ptx();
  const std::string name = cuda::kFftCropCallbackSymbol;
  std::string other = name;
  other.back() = other.back() == 'x' ? 'y' : 'x';
  for (std::size_t at = ptx.find(name); at != std::string::npos; at = ptx.find(name, at)) {
    ptx.replace(at, name.size(), other);
  }
  std::string log;
  EXPECT_NE(link_with(ptx, &log), NVJITLINK_SUCCESS);
  EXPECT_NE(log.find(other), std::string::npos) << log;
}

}  // namespace
}  // namespace convlab
