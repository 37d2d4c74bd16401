// Google Benchmark of cpu.fft: the layers cpu.fft has targets on, side by side with
// cpu.onednn (when built), and the measurements behind cpu.fft's design choices:
//   - conv/...        Plan::run of cpu.fft and cpu.onednn, all three passes; for cpu.fft the
//                     counters inputs_ms, products_ms, output_ms are its three phases
//   - fftw_layout/... 2-D r2c of 64x64 planes writing plane-major vs frequency-major spectra
//   - fftw_rows/...   a 9x9 filter in a 64x64 plane: one 2-D plan vs rows (9 only) + columns
//   - bin_gemm/...    the forward per-bin product of mb16ic32ih64oc32kh9 (2112 bins of
//                     16x32x32) and of mb16ic3ih64oc32kh9 (C = 3, a network's first layer):
//                     the bin-vectorised kernel per ISA vs cblas_cgemm per bin
// Threads follow CONVLAB_NUM_THREADS (the conv/ cases); the others are single-threaded.
//
//   CONVLAB_NUM_THREADS=2 build/bench/micro/fft_conv --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <complex>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench/micro/plan_timing.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/config.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "cpu/fft/bin_gemm.hpp"
#include "strategy/fft_geometry.hpp"
#if CONVLAB_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using namespace convlab;

const char* const kLayers[] = {"mb16ic32ih64oc32kh9", "mb16ic32ih64oc32kh13"};

void conv_case(benchmark::State& state, const std::string& algo, const std::string& desc,
               Pass pass) {
  micro::time_plan(state, registry().get(algo), parse_descriptor(desc).problem, pass);
}

// 2-D r2c of `planes` 64x64 planes, chunks of 8 from contiguous real staging; the spectra
// are written plane-major (unit stride) or frequency-major (stride = planes).
void fftw_layout(benchmark::State& state, bool frequency_major) {
  const int n = 64, planes = 512, chunk = 8, bins = n * (n / 2 + 1);
  float* in = fftwf_alloc_real(static_cast<size_t>(chunk) * n * n);
  fftwf_complex* out = fftwf_alloc_complex(static_cast<size_t>(planes) * bins);
  const int dims[2] = {n, n};
  const int ostride = frequency_major ? planes : 1, odist = frequency_major ? 1 : bins;
  fftwf_plan plan = fftwf_plan_many_dft_r2c(2, dims, chunk, in, nullptr, 1, n * n, out, nullptr,
                                            ostride, odist, FFTW_MEASURE | FFTW_DESTROY_INPUT);
  for (int i = 0; i < chunk * n * n; ++i) in[i] = static_cast<float>(i % 7);
  for (auto _ : state) {
    for (int p = 0; p < planes; p += chunk) {
      fftwf_execute_dft_r2c(plan, in,
                            frequency_major ? out + p : out + static_cast<size_t>(p) * bins);
    }
  }
  state.counters["planes_per_s"] =
      benchmark::Counter(planes, benchmark::Counter::kIsIterationInvariantRate);
  fftwf_destroy_plan(plan);
  fftwf_free(in);
  fftwf_free(out);
}

// A 9x9 filter placed in 64x64 planes: one 2-D r2c over zero-padded planes, or r2c of the 9
// nonzero rows then complex columns (cpu.fft's way).
void fftw_rows(benchmark::State& state, bool pruned) {
  const int n = 64, hw = n / 2 + 1, bins = n * hw, taps = 9, chunk = 8, planes = 1024;
  float* stage = fftwf_alloc_real(static_cast<size_t>(chunk) * n * n);
  fftwf_complex* out = fftwf_alloc_complex(static_cast<size_t>(planes) * bins);
  std::memset(out, 0, sizeof(fftwf_complex) * planes * bins);
  const int dims[2] = {n, n};
  const unsigned flags = FFTW_MEASURE | FFTW_DESTROY_INPUT;
  fftwf_plan full = fftwf_plan_many_dft_r2c(2, dims, chunk, stage, nullptr, 1, n * n, out, nullptr,
                                            1, bins, flags);
  fftwf_iodim64 row{n, 1, 1};
  fftwf_iodim64 row_vec[2] = {{chunk, taps * n, bins}, {taps, n, hw}};
  fftwf_plan rows = fftwf_plan_guru64_dft_r2c(1, &row, 2, row_vec, stage, out, flags);
  fftwf_iodim64 col{n, hw, hw};
  fftwf_iodim64 col_vec[2] = {{chunk, bins, bins}, {hw, 1, 1}};
  fftwf_plan cols = fftwf_plan_guru64_dft(1, &col, 2, col_vec, out, out, FFTW_FORWARD, flags);
  for (auto _ : state) {
    for (int p = 0; p < planes; p += chunk) {
      fftwf_complex* o = out + static_cast<size_t>(p) * bins;
      if (!pruned) {
        std::memset(stage, 0, sizeof(float) * chunk * n * n);
        for (int q = 0; q < chunk; ++q)
          for (int r = 0; r < taps; ++r)
            for (int s = 0; s < taps; ++s) stage[(q * n + r) * n + s] = 0.25f * s;
        fftwf_execute_dft_r2c(full, stage, o);
      } else {
        std::memset(stage, 0, sizeof(float) * chunk * taps * n);
        for (int q = 0; q < chunk; ++q) {
          for (int r = 0; r < taps; ++r)
            for (int s = 0; s < taps; ++s) stage[(q * taps + r) * n + s] = 0.25f * s;
          std::memset(o + static_cast<size_t>(q) * bins + taps * hw, 0,
                      sizeof(fftwf_complex) * (n - taps) * hw);
        }
        fftwf_execute_dft_r2c(rows, stage, o);
        fftwf_execute_dft(cols, o, o);
      }
    }
  }
  state.counters["planes_per_s"] =
      benchmark::Counter(planes, benchmark::Counter::kIsIterationInvariantRate);
  fftwf_destroy_plan(full);
  fftwf_destroy_plan(rows);
  fftwf_destroy_plan(cols);
  fftwf_free(stage);
  fftwf_free(out);
}

// The forward product of a layer on random spectra.
template <typename T>
struct AlignedAllocator {  // 64 bytes, as the workspace is
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64));
  }
  void deallocate(T* p, size_t) { std::free(p); }
  bool operator==(const AlignedAllocator&) const { return true; }
  bool operator!=(const AlignedAllocator&) const { return false; }
};
using AlignedFloats = std::vector<float, AlignedAllocator<float>>;

struct ProductData {
  FftGeometry g;
  AlignedFloats a, b, out;
  explicit ProductData(const std::string& layer) {
    FftGeometryOptions o;
    o.layout = FftSpectrumLayout::plane_major;
    o.bin_multiple = 8;
    g = fft_geometry(parse_descriptor(layer).problem, Pass::forward, o);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    a.resize(static_cast<size_t>(2 * g.x_planes * g.plane_stride));
    b.resize(static_cast<size_t>(2 * g.w_planes * g.plane_stride));
    out.resize(static_cast<size_t>(2 * g.y_planes * g.plane_stride));
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
  }
};

void bin_gemm_case(benchmark::State& state, CpuIsa isa, const std::string& layer) {
  if (!cpu_isa_supported(isa)) {
    state.SkipWithError("this CPU does not run this instruction set");
    return;
  }
  ProductData d(layer);
  cpu_fft::BinGemmArgs args{d.a.data(), d.b.data(), d.out.data(), d.g.plane_stride, d.g.gemm};
  for (auto _ : state) cpu_fft::bin_gemm(isa, args, 0, d.g.plane_stride);
  const double cmacs = static_cast<double>(d.g.bins) * d.g.gemm.m * d.g.gemm.n * d.g.gemm.l;
  state.counters["GFLOPs"] =
      benchmark::Counter(8 * cmacs, benchmark::Counter::kIsIterationInvariantRate);
}

#if CONVLAB_HAVE_OPENBLAS
// The same product on frequency-major spectra: one cblas_cgemm per bin,
// Y_b[16x32] = X_b[16x32] * conj(W_b[32x32])^T.
void cblas_case(benchmark::State& state, const std::string& layer) {
  const ProductData d(layer);
  const int n = static_cast<int>(d.g.gemm.m), c = static_cast<int>(d.g.gemm.l),
            k = static_cast<int>(d.g.gemm.n);
  const int64_t bins = d.g.bins;
  std::vector<std::complex<float>, AlignedAllocator<std::complex<float>>> x(bins * n * c),
      w(bins * k * c), y(bins * n * k);
  std::memcpy(x.data(), d.a.data(), x.size() * 8);
  std::memcpy(w.data(), d.b.data(), w.size() * 8);
  openblas_set_num_threads(1);
  const std::complex<float> one = 1, zero = 0;
  for (auto _ : state) {
    for (int64_t b = 0; b < bins; ++b) {
      // Row-major: Y[n][k] = sum_c X[n][c] conj(W[k][c]); W as [k][c]: op = ConjTrans.
      cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasConjTrans, n, k, c, &one, &x[b * n * c], c,
                  &w[b * k * c], c, &zero, &y[b * n * k], k);
    }
  }
  state.counters["GFLOPs"] =
      benchmark::Counter(8.0 * bins * n * c * k, benchmark::Counter::kIsIterationInvariantRate);
}
#endif

const int kRegistered = [] {
  const Pass passes[] = {Pass::forward, Pass::backward_data, Pass::backward_filter};
  std::vector<std::string> algos = {"cpu.fft"};
  if (CONVLAB_HAVE_ONEDNN) algos.push_back("cpu.onednn");
  for (const char* layer : kLayers) {
    for (Pass pass : passes) {
      for (const std::string& algo : algos) {
        const std::string name = "conv/" + std::string(layer) + "/" + to_string(pass) + "/" + algo;
        benchmark::RegisterBenchmark(name.c_str(), conv_case, algo, std::string(layer), pass)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  benchmark::RegisterBenchmark("fftw_layout/plane_major", fftw_layout, false)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("fftw_layout/frequency_major", fftw_layout, true)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("fftw_rows/2d_plan", fftw_rows, false)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("fftw_rows/rows_then_columns", fftw_rows, true)
      ->Unit(benchmark::kMillisecond);
  for (const std::string layer : {"mb16ic32ih64oc32kh9", "mb16ic3ih64oc32kh9"}) {
    for (auto isa : {CpuIsa::generic, CpuIsa::avx2, CpuIsa::avx512}) {
      const std::string name = "bin_gemm/" + layer + "/" + to_string(isa);
      benchmark::RegisterBenchmark(name.c_str(), bin_gemm_case, isa, layer)
          ->Unit(benchmark::kMillisecond);
    }
#if CONVLAB_HAVE_OPENBLAS
    const std::string name = "bin_gemm/" + layer + "/cblas_cgemm_per_bin";
    benchmark::RegisterBenchmark(name.c_str(), cblas_case, layer)->Unit(benchmark::kMillisecond);
#endif
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
