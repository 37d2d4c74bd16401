// Google Benchmark behind the GEMM kernels of cpu.winograd (docs/strategy-winograd.md) and the
// ceiling the CPU strategies are compared against (docs/strategy-im2col.md):
//  - fma_peak/<isa>: twelve independent chains of vector FMAs on registers only, the
//    machine's single-precision FMA rate on one thread (GFLOP/s, 2 flops per lane);
//  - gemm/<backend>/<m>x<n>x<k>: the unpacked SGEMM (widest instruction set), OpenBLAS's
//    sgemm and oneDNN's dnnl_sgemm (where built; each labelled with what it runs on this CPU)
//    on the same operands, held in cache between iterations: the per-point product shapes of
//    ResNet-50's 3x3 layers at mb 16, two of cpu.im2col's tap-class products (the 7x7 layer's
//    interior of 16 images, 400 columns, and the 14x14 layer's of 2 images) and a square one;
//  - gemm_pitch/unpacked/<m>x<n>x<k>/pitch<p>: the unpacked SGEMM with B's and C's rows p
//    floats apart on 64-byte-aligned operands, at p = n and n rounded up to 16 (whole lines);
//  - row_copy/<copy>/<width>: the tap classes' row copies (cpu_gemm::copy_rows) as a class's
//    column buffer takes them, 11 rows `width` floats wide, `width` + 2 apart, of each of
//    64 x 6 x 16 planes (channels x taps x images) into one run per plane, in one call: the
//    library's copy with each instruction set beside masked vector loads and stores per row
//    (AVX-512's k-masks, AVX2's vmaskmov), the copy it replaced (ns per row).
//
//   CONVLAB_NUM_THREADS=1 taskset -c 1 build/release/bench/micro/gemm_kernels \
//     --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CONVLAB_X86 1
#endif

#include "convlab/threads.hpp"
#include "lib/cpu/gemm_kernels/strided_rows.hpp"
#include "lib/cpu/gemm_kernels/unpacked_sgemm.hpp"
#include "lib/cpu/im2col/gemm.hpp"
#include "lib/cpu/isa.hpp"

namespace {

using convlab::CpuIsa;
namespace im2col = convlab::im2col;

constexpr int kChains = 12;  // enough independent FMAs to cover the latency (4) x 2 pipes

#if CONVLAB_X86
// The chains on GCC vectors of type V; inlined into a caller compiled for an instruction set,
// where a * x + y contracts to one FMA.
typedef float Vector512 __attribute__((vector_size(64)));
typedef float Vector256 __attribute__((vector_size(32)));
template <class V>
__attribute__((always_inline)) inline float fma_chains(int64_t iterations) {
  V acc[kChains];  // different starts, or the compiler computes one chain for all twelve
  for (int j = 0; j < kChains; ++j) acc[j] = 0.001f * float(j) - V{};
  const V x = 1.0000001f - V{}, y = 0.9999999f - V{};
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (V& a : acc) a = a * x + y;
  }
  float sum = 0;
  for (const V& a : acc) {
    for (std::size_t lane = 0; lane < sizeof(V) / sizeof(float); ++lane) sum += a[lane];
  }
  return sum;
}
__attribute__((target("avx512f,fma"))) float fma_chains_avx512(int64_t iterations) {
  return fma_chains<Vector512>(iterations);
}
__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iterations) {
  return fma_chains<Vector256>(iterations);
}
#endif

void BM_FmaPeak(benchmark::State& state, CpuIsa isa) {
#if CONVLAB_X86
  if (!convlab::cpu_isa_supported(isa)) {
    state.SkipWithError((std::string(convlab::to_string(isa)) + " not supported here").c_str());
    return;
  }
  constexpr int64_t kIterations = 1 << 20;
  for (auto _ : state) {
    // Opaque to the compiler each time, so that the (side-effect-free) call is not hoisted.
    int64_t iterations = kIterations;
    benchmark::DoNotOptimize(iterations);
    benchmark::DoNotOptimize(isa == CpuIsa::avx512 ? fma_chains_avx512(iterations)
                                                   : fma_chains_avx2(iterations));
  }
  const double flops = 2.0 * kChains * convlab::cpu_isa_vector_floats(isa) * kIterations;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9 * double(state.iterations()), benchmark::Counter::kIsRate);
#else
  state.SkipWithError("an x86-64 build is needed");
  (void)isa;
#endif
}

// The unpacked SGEMM with B's and C's rows `pitch` floats apart (>= n), on 64-byte-aligned
// operands: at a pitch that is not a multiple of 16 most of B's vector loads straddle two
// cache lines (cpu.im2col's tap classes round their column buffer's rows up, class_row_pitch).
void BM_GemmPitch(benchmark::State& state, int64_t m, int64_t n, int64_t k, int64_t pitch) {
  const CpuIsa isa = convlab::cpu_isa("auto", "gemm_kernels isa");
  const auto aligned = [](std::size_t floats) {
    return std::unique_ptr<float, decltype(&std::free)>(
        static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64)),
        &std::free);
  };
  auto a = aligned(static_cast<std::size_t>(m * k)),
       b = aligned(static_cast<std::size_t>(k * pitch));
  auto c = aligned(static_cast<std::size_t>(m * pitch));
  std::fill_n(a.get(), m * k, 0.5f);
  std::fill_n(b.get(), k * pitch, 0.25f);
  for (auto _ : state) {
    convlab::cpu_gemm::unpacked_sgemm(isa, false, m, n, k, a.get(), k, b.get(), pitch, 0.0f,
                                      c.get(), pitch);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * n * k * 1e-9 * double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(std::string("unpacked ") + convlab::to_string(isa));
}

void BM_Gemm(benchmark::State& state, im2col::GemmBackend backend, int64_t m, int64_t n,
             int64_t k) {
  if (!im2col::gemm_backend_available(backend)) {
    state.SkipWithError((std::string(im2col::to_string(backend)) + " not in this build").c_str());
    return;
  }
  const CpuIsa isa = convlab::cpu_isa("auto", "gemm_kernels isa");
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n);
  im2col::set_gemm_threads(backend, 1);
  for (auto _ : state) {
    im2col::sgemm(backend, false, false, m, n, k, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * n * k * 1e-9 * double(state.iterations()), benchmark::Counter::kIsRate);
  const std::string runtime = im2col::gemm_backend_runtime(backend);
  state.SetLabel(backend == im2col::GemmBackend::unpacked
                     ? std::string("unpacked ") + convlab::to_string(isa)
                     : std::string(im2col::to_string(backend)) +
                           (runtime.empty() ? "" : " " + runtime));
}

#if CONVLAB_X86
#include <immintrin.h>
// The masked row copies copy_rows ran before: one masked vector per row (rows under a
// vector's width, as the tap classes' mostly are), over the blocks of rows as copy_rows.
__attribute__((target("avx512f"))) void masked_rows_avx512(
    const float* src, int64_t src_stride, int64_t rows, int64_t width, float* dst,
    int64_t dst_stride, const convlab::cpu_gemm::RowBlocks& blocks) {
  const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1);
  for (int64_t u = 0; u < blocks.outer; ++u) {
    const float* s = src + u * blocks.src_outer;
    float* d = dst + u * blocks.dst_outer;
    for (int64_t r = 0; r < rows; ++r, s += src_stride, d += dst_stride) {
      _mm512_mask_storeu_ps(d, mask, _mm512_maskz_loadu_ps(mask, s));
    }
  }
}
__attribute__((target("avx2"))) void masked_rows_avx2(const float* src, int64_t src_stride,
                                                      int64_t rows, int64_t width, float* dst,
                                                      int64_t dst_stride,
                                                      const convlab::cpu_gemm::RowBlocks& blocks) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t u = 0; u < blocks.outer; ++u) {
    const float* s = src + u * blocks.src_outer;
    float* d = dst + u * blocks.dst_outer;
    for (int64_t r = 0; r < rows; ++r, s += src_stride, d += dst_stride) {
      for (int64_t p = 0; p < width; p += 8) {
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(width - p)), lane);
        _mm256_maskstore_ps(d + p, mask, _mm256_maskload_ps(s + p, mask));
      }
    }
  }
}
#endif

enum class RowCopy { library_avx512, library_avx2, masked_avx512, masked_avx2 };

void BM_RowCopy(benchmark::State& state, RowCopy copy, int64_t width) {
  const bool avx512 = copy == RowCopy::library_avx512 || copy == RowCopy::masked_avx512;
  const CpuIsa isa = avx512 ? CpuIsa::avx512 : CpuIsa::avx2;
  if (!convlab::cpu_isa_supported(isa) || (avx512 && width > 16)) {
    state.SkipWithError(avx512 && width > 16 ? "the masked AVX-512 copy takes rows of <= 16"
                                             : "instruction set not supported here");
    return;
  }
  constexpr int64_t kPlanes = 64 * 6 * 16, kRows = 11;
  const int64_t stride = width + 2, plane = stride * (kRows + 2);
  std::vector<float> src(static_cast<std::size_t>(kPlanes * plane), 1.0f);
  std::vector<float> dst(static_cast<std::size_t>(kPlanes * kRows * width));
  convlab::cpu_gemm::RowBlocks planes;  // one call for all planes, as the tap classes make it
  planes.outer = kPlanes;
  planes.src_outer = plane;
  planes.dst_outer = kRows * width;
  for (auto _ : state) {
    const float* from = src.data() + stride + 1;
    switch (copy) {
      case RowCopy::library_avx512:
      case RowCopy::library_avx2:
        convlab::cpu_gemm::copy_rows(isa, from, stride, kRows, width, dst.data(), width, planes);
        break;
#if CONVLAB_X86
      case RowCopy::masked_avx512:
        masked_rows_avx512(from, stride, kRows, width, dst.data(), width, planes);
        break;
      case RowCopy::masked_avx2:
        masked_rows_avx2(from, stride, kRows, width, dst.data(), width, planes);
        break;
#else
      default:
        break;
#endif
    }
    benchmark::ClobberMemory();
  }
  state.counters["ns/row"] =
      benchmark::Counter(double(kPlanes * kRows) * double(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

struct Shape {
  int64_t m, n, k;
};
// M = U V per transform point (Cd x chunk x Cs) of ResNet-50's 3x3 layers at mb 16, the 7x7
// layer's 64 tiles; filter x interior columns (K x columns x 9C) of the 7x7 and 14x14 layers'
// tap classes; a square product.
const Shape kShapes[] = {{64, 128, 64},   {128, 128, 128},   {256, 128, 256},
                         {512, 64, 512},  {512, 400, 4608},  {256, 288, 2304},
                         {1024, 1024, 1024}};

const bool kRegistered = [] {
  benchmark::RegisterBenchmark("fma_peak/avx512", BM_FmaPeak, CpuIsa::avx512);
  benchmark::RegisterBenchmark("fma_peak/avx2", BM_FmaPeak, CpuIsa::avx2);
  for (const Shape& s : kShapes) {
    const std::string dims =
        std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    for (im2col::GemmBackend backend : {im2col::GemmBackend::unpacked,
                                        im2col::GemmBackend::openblas,
                                        im2col::GemmBackend::onednn}) {
      benchmark::RegisterBenchmark(
          ("gemm/" + std::string(im2col::to_string(backend)) + "/" + dims).c_str(), BM_Gemm,
          backend, s.m, s.n, s.k);
    }
  }
  // AlexNet conv3's interior class at mb 16 (3 images of 121 pixels), two ResNet-50 14x14
  // images through every tap, a 13x13 image's interior: each at its columns and rounded up.
  for (const Shape& s : {Shape{384, 363, 2304}, Shape{256, 392, 2304}, Shape{384, 121, 2304}}) {
    for (const int64_t pitch : {s.n, (s.n + 15) / 16 * 16}) {
      benchmark::RegisterBenchmark(
          ("gemm_pitch/unpacked/" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
           std::to_string(s.k) + "/pitch" + std::to_string(pitch))
              .c_str(),
          BM_GemmPitch, s.m, s.n, s.k, pitch);
    }
  }
  const std::pair<RowCopy, const char*> copies[] = {{RowCopy::library_avx512, "library/avx512"},
                                                    {RowCopy::masked_avx512, "masked/avx512"},
                                                    {RowCopy::library_avx2, "library/avx2"},
                                                    {RowCopy::masked_avx2, "masked/avx2"}};
  for (int64_t width : {1, 2, 3, 5, 7, 11, 13}) {
    for (const auto& [copy, name] : copies) {
      benchmark::RegisterBenchmark(
          ("row_copy/" + std::string(name) + "/" + std::to_string(width)).c_str(), BM_RowCopy, copy,
          width);
    }
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
