// cuda.im2col and cuda.fft run on the host: their pass orchestration (im2col_passes.cpp,
// fft_passes.cpp, the code the GPU plans run) driven by host implementations of the
// operations: the kernels' own per-element functions (CONVLAB_HD), a column-major GEMM loop
// with cuBLAS's semantics, and a DFT that addresses memory exactly as cuFFT's advanced layout
// (CufftLayout) says. Compared with the reference under the GPU algorithms' own error bounds
// over the corpus, with poisoned workspaces. What this cannot check: the CUDA launch
// configuration, cuBLAS/cuFFT themselves, and device memory; those need a GPU
// (test_gpu_algorithms, scripts/gpu_check).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/registry.hpp"
#include "cuda/fft/fft_kernels.hpp"
#include "cuda/fft/fft_passes.hpp"
#include "cuda/im2col/im2col_kernels.hpp"
#include "cuda/im2col/im2col_passes.hpp"
#include "host_sgemm.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using Complex = std::complex<double>;

class HostIm2colOps final : public cuda::Im2colOps {
 public:
  void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
            int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
            int64_t ldc, int64_t stride_c, int64_t batch) override {
    testing::host_sgemm_strided_batched(op_a, op_b, m, n, k, a, lda, stride_a, b, ldb, stride_b,
                                        beta, c, ldc, stride_c, batch);
  }
  void im2col(const Im2colGeometry& g, const float* x_group, float* col) override {
    const auto d = cuda::Im2colDivisors::of(g);
    for (int64_t row = 0; row < col_rows(g); ++row) {
      const ColRow t = split_col_row(g, row);
      for (int64_t e = 0; e < col_cols(g); ++e) {
        col[row * col_cols(g) + e] =
            cuda::im2col_gather(g, d, t, x_group + t.c * plane_elems(g), e);
      }
    }
  }
  void col2im(const Im2colGeometry& g, const float* col, float* dx_group) override {
    // The kernel's own walk: one flat index per element, split by the divisors.
    const auto d = cuda::Im2colDivisors::of(g);
    for (int64_t e = 0; e < g.images * g.channels * plane_elems(g); ++e) {
      int64_t offset = 0;
      const float sum = cuda::col2im_gather(g, d, col, e, &offset);
      dx_group[offset] = sum;
    }
  }
  void stage(const float* src, int64_t stride, int64_t images, int64_t rows, int64_t cols,
             float* dst) override {
    for (int64_t e = 0; e < rows * images * cols; ++e) {
      dst[e] = src[cuda::stage_source(e, stride, images, rows, cols)];
    }
  }
};

// One axis of a DFT: out[k] = sum_i in[i] exp(sign 2 pi i k i / n).
std::vector<Complex> dft(const std::vector<Complex>& in, int sign) {
  const int64_t n = static_cast<int64_t>(in.size());
  std::vector<Complex> twiddle(in.size()), out(in.size());
  for (int64_t m = 0; m < n; ++m) twiddle[m] = std::polar(1.0, sign * 2.0 * M_PI * m / n);
  for (int64_t k = 0; k < n; ++k) {
    Complex sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += in[i] * twiddle[(k * i) % n];
    out[k] = sum;
  }
  return out;
}

class HostFftOps final : public cuda::FftOps {
 public:
  void place(const FftPlacement& pl, const float* src, int64_t src_h, int64_t src_w, int64_t planes,
             int64_t hf, int64_t wf, float* staging) override {
    const auto steps = cuda::PlacementSteps::of(pl);
    const auto split = cuda::PlaneSplit::of(hf, wf);
    for (int64_t e = 0; e < planes * hf * wf; ++e) {
      staging[e] = cuda::fft_place_value(pl, steps, split, src, src_h, src_w, e);
    }
  }
  void place_pair(const cuda::StagedInput& a, const cuda::StagedInput& b,
                  const FftStagingLayout& layout, int64_t hf, int64_t wf, float* staging) override {
    const auto split = cuda::PlaneSplit::of(hf, wf);
    for (int64_t e = 0; e < layout.covered(); ++e) {
      float v = 0.0f;
      if (cuda::fft_place_pair_value(a, b, layout.a_floats, layout.b_offset, split, e, &v))
        staging[e] = v;
    }
  }
  void transform(int, const cuda::CufftLayout& l, float* real, float* spectrum) override {
    run_transform(l, real, spectrum, nullptr);
  }
  // The fused crop as the device runs it: the target into the staging header, the unplaced
  // zeros, then the C2R with every value handed to the store callback's body at the offset
  // cuFFT would store it at.
  void inverse_cropped(const cuda::CufftLayout& l, float* spectrum, float* real,
                       const cuda::FftCropTarget& target) override {
    std::memcpy(reinterpret_cast<unsigned char*>(real) - cuda::kFftCropHeaderBytes, &target,
                sizeof target);
    const auto split = cuda::PlaneSplit::of(target.dst_h, target.dst_w);
    for (int64_t e = 0; e < l.batch * target.dst_h * target.dst_w; ++e) {
      cuda::fft_crop_zero_unplaced(target, split, e);
    }
    const std::function<void(int64_t, float)> store = [&](int64_t offset, float v) {
      cuda::fft_crop_store_at(real, static_cast<unsigned long long>(offset), v);
    };
    run_transform(l, real, spectrum, &store);
  }
  void transpose(const float* src, int64_t rows, int64_t cols, float* dst) override {
    const FastDivmod by_rows = FastDivmod::make(rows);
    for (int64_t e = 0; e < rows * cols; ++e) {
      const int64_t from = cuda::complex_transpose_source(by_rows, cols, e);
      dst[2 * e] = src[2 * from], dst[2 * e + 1] = src[2 * from + 1];
    }
  }
  // cuFFT's R2C / C2R over the layout's batch: the half spectrum along the last dimension,
  // memory addressed by inembed/onembed, strides and distances. With `store`, the C2R hands
  // each real value and its offset from `real` to it instead of writing it (a store callback).
  void run_transform(const cuda::CufftLayout& l, float* real, float* spectrum,
                     const std::function<void(int64_t, float)>* store) {
    float* const sp = spectrum;
    const int64_t n0 = l.n[0], n1 = l.rank == 2 ? l.n[1] : 1;
    const int64_t half1 = l.rank == 2 ? n1 / 2 + 1 : 1;
    const int64_t half0 = l.rank == 1 ? n0 / 2 + 1 : n0;
    auto real_at = [&](int64_t q, int64_t i0, int64_t i1) -> float& {
      const long long* e = l.forward ? l.inembed : l.onembed;
      const long long stride = l.forward ? l.istride : l.ostride;
      const long long dist = l.forward ? l.idist : l.odist;
      const int64_t pos = l.rank == 2 ? i0 * e[1] + i1 : i0;
      return real[q * dist + pos * stride];
    };
    auto real_out = [&](int64_t q, int64_t i0, int64_t i1, float v) {
      if (!store) {
        real_at(q, i0, i1) = v;
        return;
      }
      const int64_t pos = l.rank == 2 ? i0 * l.onembed[1] + i1 : i0;
      (*store)(q * l.odist + pos * l.ostride, v);
    };
    auto spec_at = [&](int64_t q, int64_t k0, int64_t k1) -> float* {
      const long long* e = l.forward ? l.onembed : l.inembed;
      const long long stride = l.forward ? l.ostride : l.istride;
      const long long dist = l.forward ? l.odist : l.idist;
      const int64_t pos = l.rank == 2 ? k0 * e[1] + k1 : k0;
      return sp + 2 * (q * dist + pos * stride);
    };
    for (int64_t q = 0; q < l.batch; ++q) {
      if (l.rank == 0) {
        if (l.forward) {
          spec_at(q, 0, 0)[0] = real_at(q, 0, 0), spec_at(q, 0, 0)[1] = 0;
        } else {
          real_out(q, 0, 0, spec_at(q, 0, 0)[0]);
        }
        continue;
      }
      std::vector<Complex> full(static_cast<size_t>(n0 * n1));
      if (l.forward) {
        for (int64_t i0 = 0; i0 < n0; ++i0)
          for (int64_t i1 = 0; i1 < n1; ++i1) full[i0 * n1 + i1] = real_at(q, i0, i1);
      } else {  // the Hermitian completion of the half spectrum
        for (int64_t k0 = 0; k0 < n0; ++k0)
          for (int64_t k1 = 0; k1 < n1; ++k1) {
            const bool stored = l.rank == 2 ? k1 < half1 : k0 < half0;
            const int64_t s0 = stored ? k0 : (n0 - k0) % n0, s1 = stored ? k1 : (n1 - k1) % n1;
            const float* v = spec_at(q, s0, s1);
            full[k0 * n1 + k1] = stored ? Complex(v[0], v[1]) : std::conj(Complex(v[0], v[1]));
          }
      }
      const int sign = l.forward ? -1 : 1;
      for (int64_t i0 = 0; i0 < n0; ++i0) {  // along the last dimension
        std::vector<Complex> row(full.begin() + i0 * n1, full.begin() + (i0 + 1) * n1);
        row = dft(row, sign);
        std::copy(row.begin(), row.end(), full.begin() + i0 * n1);
      }
      for (int64_t i1 = 0; i1 < n1; ++i1) {  // along the first
        std::vector<Complex> column(static_cast<size_t>(n0));
        for (int64_t i0 = 0; i0 < n0; ++i0) column[i0] = full[i0 * n1 + i1];
        column = dft(column, sign);
        for (int64_t i0 = 0; i0 < n0; ++i0) full[i0 * n1 + i1] = column[i0];
      }
      for (int64_t k0 = 0; k0 < n0; ++k0)
        for (int64_t k1 = 0; k1 < n1; ++k1) {
          if (l.forward) {
            if (l.rank == 2 ? k1 >= half1 : k0 >= half0) continue;
            float* v = spec_at(q, k0, k1);
            v[0] = float(full[k0 * n1 + k1].real()), v[1] = float(full[k0 * n1 + k1].imag());
          } else {
            real_out(q, k0, k1, float(full[k0 * n1 + k1].real()));
          }
        }
    }
  }
  void cgemm(const cuda::CgemmCall& c, const float* a, const float* b, float* out,
             int64_t bins) override {
    auto read = [](const float* x, const cuda::CgemmOperand& o, int64_t r, int64_t col) {
      const int64_t index = o.op == 'N' ? r + col * o.ld : col + r * o.ld;
      const Complex v(x[2 * index], x[2 * index + 1]);
      return o.op == 'C' ? std::conj(v) : v;
    };
    for (int64_t q = 0; q < bins; ++q)
      for (int64_t j = 0; j < c.n; ++j)
        for (int64_t i = 0; i < c.m; ++i) {
          Complex sum = 0;
          for (int64_t l = 0; l < c.k; ++l) {
            sum +=
                read(a + 2 * q * c.a.stride, c.a, i, l) * read(b + 2 * q * c.b.stride, c.b, l, j);
          }
          float* o = out + 2 * (q * c.c.stride + i + j * c.c.ld);
          o[0] = float(sum.real()), o[1] = float(sum.imag());
        }
  }
  void crop(const FftPlacement& pl, const float* staging, int64_t hf, int64_t wf, int64_t planes,
            int64_t dst_h, int64_t dst_w, float scale, float* dst) override {
    const auto split = cuda::PlaneSplit::of(dst_h, dst_w);
    for (int64_t e = 0; e < planes * dst_h * dst_w; ++e) {
      dst[e] = cuda::fft_crop_value(pl, split, staging, hf, wf, scale, e);
    }
  }
};

// A poisoned host workspace (0xFF bytes are NaNs), 256-byte aligned like the device's.
struct HostWorkspace {
  explicit HostWorkspace(std::size_t bytes) : storage(bytes + 256, 0xFF) {}
  unsigned char* data() {
    auto address = reinterpret_cast<std::uintptr_t>(storage.data());
    return storage.data() + (256 - address % 256) % 256;
  }
  std::vector<unsigned char> storage;
};

template <typename Run>
testing::CorpusSummary emulate(const std::vector<ConvProblem>& problems, uint64_t seed, Fill fill,
                               const Run& run_case) {
  testing::CorpusSummary summary;
  for (const ConvProblem& p : problems) {
    for (Pass pass : testing::all_passes()) {
      HostTensors t = make_inputs(p, pass, seed++, fill);
      const HostTensors inputs = t;
      const ErrorBound bound = run_case(p, pass, t);
      const AccuracyReport r = compare_with_reference(
          p, pass, inputs, t.output(pass),
          fill == Fill::integers ? ErrorBound{ErrorBound::Kind::elementwise, 0.0, 0.0} : bound);
      if (r.within_bound) {
        ++summary.passed;
      } else {
        ++summary.failed;
        summary.failures.push_back(p.descriptor() + " " + to_string(pass) + ": " + r.detail);
      }
    }
  }
  return summary;
}

std::vector<ConvProblem> corpus(uint64_t seed, int random) {
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::scaled_suite_layers()) problems.push_back(p);
  for (const ConvProblem& p : testing::random_problems(seed, random)) problems.push_back(p);
  return problems;
}

TEST(CudaIm2colEmulated, CorpusUnderEveryImagesSetting) {
  const uint64_t seed = testing::run_seed();
  const Algorithm& algorithm = registry().get("cuda.im2col");
  for (int64_t images : {0, 1, 2, 3}) {
    for (Fill fill : {Fill::uniform, Fill::integers}) {
      std::vector<ConvProblem> problems = corpus(seed, 60);
      for (ConvProblem& p : problems) p.n = std::max<int64_t>(p.n, 1 + images);  // short chunks
      const auto summary =
          emulate(problems, seed, fill, [&](const ConvProblem& p, Pass pass, HostTensors& t) {
            const cuda::CudaIm2colLayout layout = cuda::cuda_im2col_layout(p, pass, images, 0);
            HostWorkspace ws(layout.workspace_bytes);
            float* col = layout.col_bytes ? reinterpret_cast<float*>(ws.data() + layout.col_offset)
                                          : nullptr;
            float* stage = layout.stage_bytes
                               ? reinterpret_cast<float*>(ws.data() + layout.stage_offset)
                               : nullptr;
            HostIm2colOps ops;
            cuda::run_im2col_pass(p, pass, layout, {t.x.data(), t.w.data(), t.y.data()}, col, stage,
                                  ops);
            return cuda::cuda_im2col_error_bound(p, pass, layout.chunks);
          });
      const std::string label = "emulated, images " + std::to_string(images) +
                                (fill == Fill::integers ? ", integers (exact)" : "");
      EXPECT_TRUE(testing::report_corpus(algorithm.name(), label, summary, seed));
      EXPECT_EQ(summary.passed, static_cast<int>(problems.size() * 3));
    }
  }
}

TEST(CudaFftEmulated, CorpusUnderEveryStaging) {
  const uint64_t seed = testing::run_seed() + 1;
  const Algorithm& algorithm = registry().get("cuda.fft");
  const std::vector<ConvProblem> problems = corpus(seed, 100);
  for (FftStaging staging : {FftStaging::fused, FftStaging::separate}) {
    const auto summary = emulate(
        problems, seed, Fill::uniform, [&](const ConvProblem& p, Pass pass, HostTensors& t) {
          const cuda::FftSchedule s = cuda::fft_schedule(p, pass, 0, staging);
          HostWorkspace ws(static_cast<std::size_t>(s.geometry.total_bytes));
          HostFftOps ops;
          cuda::run_fft_pass(p, s, {t.x.data(), t.w.data(), t.y.data()}, ws.data(), ops);
          return algorithm.error_bound(p, pass);
        });
    EXPECT_TRUE(testing::report_corpus(
        algorithm.name(), std::string("emulated, staging ") + to_string(staging), summary, seed));
    EXPECT_EQ(summary.passed, static_cast<int>(problems.size() * 3));
  }
}

// The knobs crop and layout: every combination other than the default (run above) against
// the reference over the corpus.
TEST(CudaFftEmulated, CorpusUnderEveryCropAndLayout) {
  const uint64_t seed = testing::run_seed() + 5;
  const Algorithm& algorithm = registry().get("cuda.fft");
  const std::vector<ConvProblem> problems = corpus(seed, 20);
  const std::pair<cuda::FftBatchLayout, cuda::FftCrop> variants[] = {
      {cuda::FftBatchLayout::strided, cuda::FftCrop::fused},
      {cuda::FftBatchLayout::contiguous, cuda::FftCrop::separate},
      {cuda::FftBatchLayout::contiguous, cuda::FftCrop::fused}};
  for (const auto& [layout, crop] : variants) {
    const auto summary = emulate(
        problems, seed, Fill::uniform, [&](const ConvProblem& p, Pass pass, HostTensors& t) {
          const cuda::FftSchedule s =
              cuda::fft_schedule(p, pass, 0, FftStaging::fused, layout, crop);
          HostWorkspace ws(static_cast<std::size_t>(s.geometry.total_bytes));
          HostFftOps ops;
          cuda::run_fft_pass(p, s, {t.x.data(), t.w.data(), t.y.data()}, ws.data(), ops);
          return algorithm.error_bound(p, pass);
        });
    EXPECT_TRUE(testing::report_corpus(
        algorithm.name(),
        std::string("emulated, layout ") + to_string(layout) + ", crop " + to_string(crop), summary,
        seed));
    EXPECT_EQ(summary.passed, static_cast<int>(problems.size() * 3));
  }
}

// Odd sizes, strides above 1 in either axis, asymmetric padding, dilation, groups, a column,
// a row and a 1 x 1 plane: the shapes where the crop reads sparse slots, drops rows of x
// (unplaced elements) or the transform degenerates.
std::vector<ConvProblem> crop_shapes() {
  std::vector<ConvProblem> shapes;
  auto add = [&](int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s,
                 int64_t ph, int64_t pw, int64_t ph_end, int64_t pw_end, int64_t sh, int64_t sw,
                 int64_t dh, int64_t dw, int64_t groups) {
    ConvProblem p;
    p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
    p.pad_h = ph, p.pad_w = pw, p.pad_h_end = ph_end, p.pad_w_end = pw_end;
    p.stride_h = sh, p.stride_w = sw, p.dilation_h = dh, p.dilation_w = dw, p.groups = groups;
    p.validate();
    shapes.push_back(p);
  };
  add(2, 3, 11, 9, 5, 3, 3, 1, 0, 2, 1, 2, 3, 1, 1, 1);   // strides 2 and 3, asymmetric pads
  add(1, 4, 13, 7, 6, 5, 2, 2, 1, 0, 0, 3, 2, 1, 2, 2);   // dropped x rows, dilation, groups
  add(3, 2, 7, 1, 3, 3, 1, 1, 0, 1, 0, 2, 1, 1, 1, 1);    // a column: Wf = 1
  add(2, 3, 1, 10, 2, 1, 4, 0, 2, 0, 1, 1, 3, 1, 1, 1);   // a row: Hf = 1
  add(2, 5, 1, 1, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1);    // 1 x 1: the identity transform
  add(1, 6, 10, 12, 4, 4, 3, 0, 1, 3, 0, 2, 2, 2, 1, 2);  // even and odd, all at once
  return shapes;
}

// The fused crop and the contiguous layout move data differently but compute the same
// numbers: every variant's output equals the default's bit for bit (the emulated transforms
// compute each value the same way whatever the addressing), all three passes.
TEST(CudaFftEmulated, CropAndLayoutVariantsGiveTheDefaultsBits) {
  const uint64_t seed = testing::run_seed() + 7;
  int compared = 0;
  for (const ConvProblem& p : crop_shapes()) {
    for (Pass pass : testing::all_passes()) {
      auto run = [&](FftStaging staging, cuda::FftBatchLayout layout, cuda::FftCrop crop) {
        const cuda::FftSchedule s = cuda::fft_schedule(p, pass, 0, staging, layout, crop);
        HostWorkspace ws(static_cast<std::size_t>(s.geometry.total_bytes));
        HostTensors t = make_inputs(p, pass, seed);  // the output poisoned with NaNs
        HostFftOps ops;
        cuda::run_fft_pass(p, s, {t.x.data(), t.w.data(), t.y.data()}, ws.data(), ops);
        return t.output(pass);
      };
      const std::vector<float> expected =
          run(FftStaging::fused, cuda::FftBatchLayout::strided, cuda::FftCrop::separate);
      ASSERT_TRUE(std::none_of(expected.begin(), expected.end(), [](float v) {
        return std::isnan(v);
      })) << p.descriptor();
      for (FftStaging staging : {FftStaging::fused, FftStaging::separate}) {
        for (auto layout : {cuda::FftBatchLayout::strided, cuda::FftBatchLayout::contiguous}) {
          for (auto crop : {cuda::FftCrop::separate, cuda::FftCrop::fused}) {
            const std::vector<float> got = run(staging, layout, crop);
            ASSERT_EQ(got.size(), expected.size());
            EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
                << p.descriptor() << " " << to_string(pass) << ": staging " << to_string(staging)
                << ", layout " << to_string(layout) << ", crop " << to_string(crop);
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, static_cast<int>(crop_shapes().size()) * 3 * 8);
}

// cache_filters: a second run that reuses the w spectra left in the workspace gives the same
// bits without reading w (poisoned to NaN for it); reusing from a workspace that never held
// them gives NaNs, so the reuse really skips the transform.
TEST(CudaFftEmulated, ReusedFilterSpectra) {
  const uint64_t seed = testing::run_seed() + 3;
  int checked = 0;
  for (const ConvProblem& p : corpus(seed, 20)) {
    for (Pass pass : {Pass::forward, Pass::backward_data}) {
      for (FftStaging staging : {FftStaging::fused, FftStaging::separate}) {
        const cuda::FftSchedule s = cuda::fft_schedule(p, pass, 0, staging);
        const auto bytes = static_cast<std::size_t>(s.geometry.total_bytes);
        HostFftOps ops;
        HostTensors t = make_inputs(p, pass, seed);
        HostWorkspace ws(bytes);
        cuda::run_fft_pass(p, s, {t.x.data(), t.w.data(), t.y.data()}, ws.data(), ops);
        const std::vector<float> first = t.output(pass);

        HostTensors again = make_inputs(p, pass, seed);  // output poisoned again
        std::fill(again.w.begin(), again.w.end(), std::numeric_limits<float>::quiet_NaN());
        cuda::run_fft_pass(p, s, {again.x.data(), again.w.data(), again.y.data()}, ws.data(), ops,
                           true);
        ASSERT_EQ(
            std::memcmp(first.data(), again.output(pass).data(), first.size() * sizeof(float)), 0)
            << p.descriptor() << " " << to_string(pass) << " (seed " << seed << ")";

        HostTensors fresh = make_inputs(p, pass, seed);
        HostWorkspace never(bytes);  // 0xFF: NaN spectra
        cuda::run_fft_pass(p, s, {fresh.x.data(), fresh.w.data(), fresh.y.data()}, never.data(),
                           ops, true);
        const auto& out = fresh.output(pass);
        // Where no output depends on the filter (every tap of every output falls in the
        // padding, e.g. g4mb3ic4ih1iw21oc4oh1ow10kh1kw6sh3sw3ph1pw6 backward-data: dx is zero
        // whatever w is), the spectra are never read into a kept output.
        const bool reads_w =
            std::any_of(first.begin(), first.end(), [](float v) { return v != 0.0f; });
        EXPECT_TRUE(!reads_w ||
                    std::any_of(out.begin(), out.end(), [](float v) { return std::isnan(v); }))
            << p.descriptor() << " " << to_string(pass) << ": reuse did not read the workspace";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace convlab
