// Google Benchmark behind the GEMM kernels of cpu.winograd (docs/strategy-winograd.md) and the
// ceiling the CPU strategies are compared against (docs/strategy-im2col.md):
//  - fma_peak/<isa>: twelve independent chains of vector FMAs on registers only, the
//    machine's single-precision FMA rate on one thread (GFLOP/s, 2 flops per lane);
//  - gemm/<backend>/<m>x<n>x<k>: the unpacked SGEMM (widest instruction set), OpenBLAS's
//    sgemm and oneDNN's dnnl_sgemm (where built; each labelled with what it runs on this CPU)
//    on the same operands, held in cache between iterations: the per-point product shapes of
//    ResNet-50's 3x3 layers at mb 16, two of cpu.im2col's tap-class products (the 7x7 layer's
//    interior of 16 images, 400 columns, and the 14x14 layer's of 2 images) and a square one.
//
//   CONVLAB_NUM_THREADS=1 taskset -c 1 build/release/bench/micro/gemm_kernels \
//     --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CONVLAB_X86 1
#endif

#include "convlab/threads.hpp"
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
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
