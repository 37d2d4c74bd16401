// Host-side logic of the CUDA backends, checked without a GPU: status names and the error
// codes they become, the settings parsers, the workspace arithmetic of cuda.im2col, the
// cudnn.* naming across passes, and what the registered algorithms say when there is no
// usable device (the CI case: available() = no with the CUDA status, never a crash).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "convlab/config.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "cuda/common/device.hpp"
#include "cuda/common/math_mode.hpp"
#include "cuda/common/settings.hpp"
#include "cuda/common/status.hpp"
#include "cuda/common/workspace_layout.hpp"
#include "cuda/im2col/cuda_im2col.hpp"
#if CONVLAB_HAVE_CUDNN
#include "cuda/cudnn/cudnn_names.hpp"
#endif

namespace convlab {
namespace {

using cuda::CudaIm2colLayout;

ConvProblem make(int64_t n, int64_t c, int64_t h, int64_t k, int64_t r, int64_t pad, int64_t stride,
                 int64_t groups = 1) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = h, p.w = h, p.k = k, p.r = r, p.s = r;
  p.pad_h = p.pad_w = pad, p.stride_h = p.stride_w = stride, p.groups = groups;
  return p;
}

TEST(CudaStatus, NamesComeFromTheLibraries) {
  EXPECT_EQ(cuda::cuda_error_name(2), "cudaErrorMemoryAllocation");
  EXPECT_EQ(cuda::cuda_error_name(35), "cudaErrorInsufficientDriver");
  EXPECT_EQ(cuda::cuda_error_name(100), "cudaErrorNoDevice");
  EXPECT_EQ(cuda::cufft_status_name(2), "CUFFT_ALLOC_FAILED");
  EXPECT_EQ(cuda::cufft_status_name(8), "CUFFT_INVALID_SIZE");
  EXPECT_EQ(cuda::cufft_status_name(999), "CUFFT_STATUS_999");
  EXPECT_EQ(cuda::cublas_status_name(3), "CUBLAS_STATUS_ALLOC_FAILED");
  EXPECT_EQ(cuda::cublas_status_name(15), "CUBLAS_STATUS_NOT_SUPPORTED");
}

TEST(CudaStatus, ErrorCodes) {
  EXPECT_EQ(cuda::cuda_error_code(2), ErrorCode::out_of_memory);
  EXPECT_EQ(cuda::cuda_error_code(100), ErrorCode::unavailable);
  EXPECT_EQ(cuda::cuda_error_code(35), ErrorCode::unavailable);
  EXPECT_EQ(cuda::cuda_error_code(209), ErrorCode::unavailable);  // no kernel image
  EXPECT_EQ(cuda::cuda_error_code(700), ErrorCode::backend);      // illegal address
  EXPECT_EQ(cuda::cufft_error_code(2), ErrorCode::out_of_memory);
  EXPECT_EQ(cuda::cufft_error_code(8), ErrorCode::unsupported);
  EXPECT_EQ(cuda::cufft_error_code(5), ErrorCode::backend);
  EXPECT_EQ(cuda::cublas_error_code(3), ErrorCode::out_of_memory);
  EXPECT_EQ(cuda::cublas_error_code(13), ErrorCode::backend);
  EXPECT_EQ(cuda::cudnn_error_code(3000), ErrorCode::unsupported);
  EXPECT_EQ(cuda::cudnn_error_code(3007), ErrorCode::unsupported);  // arch mismatch
  EXPECT_EQ(cuda::cudnn_error_code(4004), ErrorCode::out_of_memory);
  EXPECT_EQ(cuda::cudnn_error_code(2000), ErrorCode::backend);
  EXPECT_EQ(cuda::cudnn_error_code(5000), ErrorCode::backend);
}

TEST(CudaStatus, FailureCarriesNameCallAndPlace) {
  try {
    cuda::fail_cufft(2, "cufftMakePlanMany64(plan, ...)", "cuda/fft/x.cpp", 12);
    FAIL() << "fail_cufft returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::out_of_memory);
    EXPECT_EQ(std::string(e.what()),
              "cufftMakePlanMany64(plan, ...) failed: CUFFT_ALLOC_FAILED at cuda/fft/x.cpp:12");
  }
  try {
    cuda::fail_cuda(2, "cudaMalloc(&p, n)", "f.cpp", 3);
    FAIL() << "fail_cuda returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::out_of_memory);
    EXPECT_NE(std::string(e.what()).find("cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation ("),
              std::string::npos)
        << e.what();
  }
}

TEST(CudaSettings, Tf32SwitchIsStrict) {
  EXPECT_FALSE(cuda::parse_allow_tf32(nullptr));
  EXPECT_FALSE(cuda::parse_allow_tf32(""));
  EXPECT_FALSE(cuda::parse_allow_tf32("0"));
  EXPECT_TRUE(cuda::parse_allow_tf32("1"));
  EXPECT_THROW(cuda::parse_allow_tf32("yes"), Error);
  // This test runs without CONVLAB_ALLOW_TF32: fp32 and the plain bound factors.
  if (!environment_default("CONVLAB_ALLOW_TF32")) {
    EXPECT_EQ(cuda::math_mode_name(), "fp32");
    EXPECT_EQ(cuda::math_mode_factor(8.0), 8.0);
  }
}

// Every GPU algorithm takes the device and the math mode as knobs; the cuBLAS users the
// cuBLAS workspace; bad values name the knob.
TEST(CudaSettings, KnobsOfEveryGpuAlgorithm) {
  int gpu = 0;
  for (const Algorithm* a : registry().all()) {
    if (a->device() != Device::gpu) continue;
    ++gpu;
    const KnobValues knobs = cuda::default_knobs(a->info());
    ASSERT_TRUE(knobs.count("device")) << a->name();
    ASSERT_TRUE(knobs.count("allow_tf32")) << a->name();
    if (!environment_default("CONVLAB_ALLOW_TF32")) {
      EXPECT_EQ(knobs.at("allow_tf32"), "false") << a->name();
    }
    try {
      a->plan(parse_descriptor("mb1ic1ih4oc1kh3").problem, Pass::forward, {{"device", "gpu0"}});
      ADD_FAILURE() << a->name() << " accepted device=gpu0";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(a->name() + ".device"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("gpu0"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(gpu, 0);
  for (const char* name : {"cuda.fft", "cuda.im2col"}) {
    EXPECT_TRUE(cuda::default_knobs(registry().get(name).info()).count("cublas_workspace"));
  }
  EXPECT_TRUE(cuda::default_knobs(registry().get("cuda.im2col").info()).count("images"));
#if CONVLAB_HAVE_CUDNN
  const KnobValues find = resolve_knobs("cudnn.find", registry().get("cudnn.find").info().knobs,
                                        {{"workspace", "512MiB"}});
  EXPECT_EQ(*knob_bytes(find, "workspace"), std::size_t(512) << 20);
  EXPECT_THROW(resolve_knobs("cudnn.find", registry().get("cudnn.find").info().knobs,
                             {{"workspace", "lots"}}),
               Error);
#endif
}

TEST(CudaSettings, CublasWorkspaceAndDeviceIndex) {
  cuda::GpuSettings automatic;
  EXPECT_EQ(cuda::cublas_workspace_bytes(automatic, 9), 32u << 20);  // cuBLAS's Hopper pool
  EXPECT_EQ(cuda::cublas_workspace_bytes(automatic, 8), 4u << 20);
  const KnobValues given = resolve_knobs("cuda.fft", registry().get("cuda.fft").info().knobs,
                                         {{"cublas_workspace", "4KiB"}, {"device", "1"}});
  const cuda::GpuSettings s = cuda::gpu_settings(given);
  EXPECT_EQ(cuda::cublas_workspace_bytes(s, 9), 4096u);
  EXPECT_EQ(s.device, 1);
  EXPECT_EQ(cuda::parse_device_index(nullptr), 0);
  EXPECT_EQ(cuda::parse_device_index("1"), 1);
  EXPECT_THROW(cuda::parse_device_index("-1"), Error);
  EXPECT_THROW(cuda::parse_device_index("gpu0"), Error);
}

TEST(CudaWorkspace, LayoutAlignsEveryBuffer) {
  cuda::WorkspaceLayout layout;
  const int a = layout.add(10, "a");
  const int empty = layout.add(0, "empty");
  const int b = layout.add(300, "b");
  EXPECT_EQ(layout.offset(a), 0u);
  EXPECT_EQ(layout.offset(empty), 256u);
  EXPECT_EQ(layout.offset(b), 256u);
  EXPECT_EQ(layout.bytes(), 256u + 300u);
  char base[1024];
  EXPECT_EQ(layout.at<char>(base, empty), nullptr);
  EXPECT_EQ(layout.at<char>(base, b), base + 256);
  EXPECT_THROW(layout.add(~std::size_t(0) - 100, "huge"), Error);
}

// The formula of cuda_im2col.hpp, term by term, on a ResNet-50 3x3 layer at mb 32.
TEST(CudaIm2colLayout, FormulaOnAResNetLayer) {
  const ConvProblem p = make(32, 64, 56, 64, 3, 1, 1);
  const std::size_t cublas = 32u << 20;
  const int64_t L = 64 * 9, P = 56 * 56;
  const int64_t b = (cuda::kIm2colTargetColumns + P - 1) / P;  // 3
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    const CudaIm2colLayout l = cuda::cuda_im2col_layout(p, pass, 0, cublas);
    EXPECT_EQ(l.images, b);
    EXPECT_EQ(l.chunks, (32 + b - 1) / b);
    EXPECT_FALSE(l.pointwise);
    EXPECT_EQ(l.cublas_offset, 0u);
    EXPECT_EQ(l.col_offset, cublas);
    EXPECT_EQ(l.col_bytes, std::size_t(4 * L * b * P));
    const std::size_t stage = pass == Pass::backward_filter ? std::size_t(4 * 64 * b * P) : 0;
    EXPECT_EQ(l.stage_bytes, stage);
    const std::size_t col_end = cublas + l.col_bytes;
    EXPECT_EQ(l.workspace_bytes,
              stage ? cuda::WorkspaceLayout::round_up(col_end) + stage : col_end);
  }
}

TEST(CudaIm2colLayout, ImagesSettingCapsAndShortcut) {
  // Late layer: P = 49, so automatic b wants 168 images, capped at mb.
  const ConvProblem late = make(32, 512, 7, 512, 3, 1, 1);
  EXPECT_EQ(cuda::cuda_im2col_layout(late, Pass::forward, 0, 0).images, 32);
  EXPECT_EQ(cuda::cuda_im2col_layout(late, Pass::forward, 5, 0).images, 5);
  EXPECT_EQ(cuda::cuda_im2col_layout(late, Pass::forward, 5, 0).chunks, 7);
  EXPECT_EQ(cuda::cuda_im2col_layout(late, Pass::forward, 100, 0).images, 32);
  // A huge column buffer: the 256 MiB cap keeps b at 1 (and never below).
  const ConvProblem big = make(8, 256, 224, 64, 7, 3, 1);
  const CudaIm2colLayout l = cuda::cuda_im2col_layout(big, Pass::forward, 0, 0);
  EXPECT_EQ(l.images, 1);
  EXPECT_GT(l.col_bytes, std::size_t(cuda::kIm2colColumnCap));
  // 1x1 / stride 1 / pad 0: no column buffer for forward and backward-data; backward-filter
  // keeps x in place only with b = 1.
  const ConvProblem pw = make(4, 64, 14, 128, 1, 0, 1);
  EXPECT_TRUE(cuda::cuda_im2col_layout(pw, Pass::forward, 0, 0).pointwise);
  EXPECT_EQ(cuda::cuda_im2col_layout(pw, Pass::forward, 0, 0).col_bytes, 0u);
  EXPECT_EQ(cuda::cuda_im2col_layout(pw, Pass::backward_data, 0, 0).workspace_bytes, 0u);
  EXPECT_FALSE(cuda::cuda_im2col_layout(pw, Pass::backward_filter, 0, 0).pointwise);
  EXPECT_TRUE(cuda::cuda_im2col_layout(pw, Pass::backward_filter, 1, 0).pointwise);
  EXPECT_EQ(cuda::cuda_im2col_layout(pw, Pass::backward_filter, 1, 0).workspace_bytes, 0u);
  // A strided 1x1 is not the shortcut, nor one with an end padding (the output outgrows x).
  EXPECT_FALSE(cuda::cuda_im2col_layout(make(2, 8, 8, 8, 1, 0, 2), Pass::forward, 0, 0).pointwise);
  ConvProblem end_padded = pw;
  end_padded.pad_w_end = 1;
  EXPECT_FALSE(cuda::cuda_im2col_layout(end_padded, Pass::forward, 0, 0).pointwise);
}

TEST(CudaIm2colLayout, GroupsUseOneGroupsBuffer) {
  const ConvProblem p = make(2, 8, 9, 8, 3, 1, 1, 4);  // C/g = 2, K/g = 2
  const CudaIm2colLayout l = cuda::cuda_im2col_layout(p, Pass::backward_filter, 2, 0);
  EXPECT_EQ(l.col_bytes, std::size_t(4 * 2 * 9 * 2 * 81));
  EXPECT_EQ(l.stage_bytes, std::size_t(4 * 2 * 2 * 81));
}

#if CONVLAB_HAVE_CUDNN
TEST(CudnnNames, UniqueAndPerPass) {
  std::set<std::string> names;
  int per_pass[3] = {0, 0, 0};
  for (const auto& entry : cuda::cudnn_algo_names()) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    const Pass passes[] = {Pass::forward, Pass::backward_data, Pass::backward_filter};
    for (int i = 0; i < 3; ++i) {
      const int algo = cuda::cudnn_algo_for(entry, passes[i]);
      if (algo < 0) continue;
      ++per_pass[i];
      EXPECT_EQ(cuda::cudnn_registry_name(passes[i], algo), std::string("cudnn.") + entry.name);
    }
  }
  // cuDNN 9's legacy counts: 8 forward, 6 backward-data, 7 backward-filter algorithms.
  EXPECT_EQ(per_pass[0], 8);
  EXPECT_EQ(per_pass[1], 6);
  EXPECT_EQ(per_pass[2], 7);
  EXPECT_EQ(cuda::cudnn_enum_name(Pass::forward, 1),
            "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM");
  EXPECT_EQ(cuda::cudnn_enum_name(Pass::backward_data, 0), "CUDNN_CONVOLUTION_BWD_DATA_ALGO_0");
  EXPECT_EQ(cuda::cudnn_enum_name(Pass::backward_filter, 6),
            "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING");
  EXPECT_EQ(cuda::cudnn_enum_name(Pass::forward, 42), "unknown");
  EXPECT_EQ(cuda::cudnn_registry_name(Pass::backward_filter, 3), "cudnn.algo_3");
}

TEST(CudnnNames, DeterminismPerCudnnDocs) {
  for (const auto& entry : cuda::cudnn_algo_names()) {
    const std::string name = entry.name;
    EXPECT_EQ(entry.deterministic, name != "algo_0" && name != "algo_3") << name;
  }
}
#endif

// Every CUDA algorithm is registered; without a usable device each says why, supports()
// gives that reason, plan() throws Error{unavailable}, and nothing crashes. With a device
// (the GPU machine) they are available.
TEST(CudaRegistry, AvailabilityIsReported) {
  std::vector<std::string> names = {"cuda.im2col"};
#if CONVLAB_HAVE_CUDNN
  for (const auto& entry : cuda::cudnn_algo_names())
    names.push_back(std::string("cudnn.") + entry.name);
  names.push_back("cudnn.find");
#endif
  const ConvProblem p = make(2, 3, 8, 4, 3, 1, 1);
  const Support device = cuda::device_support(cuda::default_device_index());
  std::cout << "CUDA device " << cuda::default_device_index() << ": "
            << (device ? "usable" : device.reason) << "\n";
  // The marker scripts/gpu_check reads (one exact line, so no prose can be mistaken for it).
  std::cout << "CONVLAB_GPU usable=" << (device ? "yes" : "no")
            << (device ? "" : " reason=" + device.reason) << "\n";
  for (const std::string& name : names) {
    const Algorithm& a = registry().get(name);
    EXPECT_EQ(a.device(), Device::gpu);
    if (device) {
      EXPECT_TRUE(a.available().ok) << name << ": " << a.available().reason;
      continue;
    }
    const Support s = a.available();
    EXPECT_FALSE(s.ok) << name;
    EXPECT_NE(s.reason.find("CUDA device"), std::string::npos) << name << ": " << s.reason;
    const Support sp = a.supports(p, Pass::forward);
    EXPECT_FALSE(sp.ok);
    EXPECT_FALSE(sp.reason.empty());
    try {
      a.plan(p, Pass::forward);
      ADD_FAILURE() << name << ": plan() without a device did not throw";
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == ErrorCode::unavailable || e.code() == ErrorCode::unsupported)
          << name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("CUDA device"), std::string::npos) << e.what();
    }
  }
}

#if CONVLAB_HAVE_CUDNN
// cuDNN's convolution descriptor has one padding per axis: every cudnn.* algorithm refuses
// an end padding unlike the start one, saying so, before it needs a device.
TEST(CudaRegistry, CudnnRefusesAsymmetricPadding) {
  const ConvProblem asymmetric = parse_descriptor("mb2ic4ih8oc4oh9kh3").problem;  // top 1, bottom 2
  ASSERT_TRUE(asymmetric.asymmetric_padding());
  std::vector<std::string> names = {"cudnn.find"};
  for (const auto& entry : cuda::cudnn_algo_names())
    names.push_back(std::string("cudnn.") + entry.name);
  for (const std::string& name : names) {
    for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
      const Support s = registry().get(name).supports(asymmetric, pass);
      EXPECT_FALSE(s.ok) << name;
      EXPECT_NE(s.reason.find("one padding per axis: end padding (bottom 2, right 2) differs "
                              "from the start padding (top 1, left 1)"),
                std::string::npos)
          << name << ": " << s.reason;
    }
  }
}
#endif

TEST(CudaRegistry, InvalidProblemIsStillInvalid) {
  ConvProblem bad = make(1, 3, 5, 8, 7, 0, 1);  // kernel larger than the input
  EXPECT_THROW(registry().get("cuda.im2col").supports(bad, Pass::forward), Error);
}

// cuda.fft describes its cache_filters knob, off by default, and a bad value is refused by
// name before any device is needed.
TEST(CudaRegistry, FftCacheFiltersKnob) {
  const Algorithm& fft = registry().get("cuda.fft");
  const KnobSpec* knob = nullptr;
  for (const KnobSpec& k : fft.info().knobs) {
    if (k.name == "cache_filters") knob = &k;
  }
  ASSERT_NE(knob, nullptr);
  EXPECT_EQ(knob->type, KnobType::boolean);
  EXPECT_EQ(knob->default_value, "false");
  ConvProblem p;
  p.n = 1, p.c = 2, p.h = p.w = 5, p.k = 3, p.r = p.s = 3;
  try {
    fft.plan(p, Pass::forward, {{"cache_filters", "sometimes"}});
    ADD_FAILURE() << "cache_filters=sometimes accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("sometimes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convlab
