// fft_geometry: smooth sizes, the no-wraparound property (by brute force: each pass computed
// as circular sums over the placed planes, exactly as the frequency domain would, and
// compared with the reference), the per-bin product description, and the workspace layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "convlab/accuracy.hpp"
#include "cpu_reference/reference.hpp"
#include "strategy/fft_geometry.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::problem;

TEST(FftGeometry, SmoothSizes) {
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 49, 64, 70, 72, 125, 343, 1000}) {
    EXPECT_TRUE(fft_is_smooth(n)) << n;
  }
  for (int64_t n : {0, -4, 11, 13, 22, 26, 33, 121, 1001, 1013}) EXPECT_FALSE(fft_is_smooth(n)) << n;
  // fft_next_smooth is the smallest smooth size at or above n, checked by trial division.
  for (int64_t n = 1; n <= 3000; ++n) {
    int64_t m = n;
    auto smooth = [](int64_t v) {
      for (int64_t p = 2; p * p <= v; ++p) {
        if (v % p == 0 && p > 7) return false;
        while (v % p == 0) v /= p;
      }
      return v <= 7;
    };
    while (!smooth(m)) ++m;
    ASSERT_EQ(fft_next_smooth(n), m) << n;
    int64_t e = m;
    while (!smooth(e) || e % 2 != 0) ++e;
    ASSERT_EQ(fft_next_smooth(n, true), e) << n << " (even)";
  }
  EXPECT_EQ(fft_next_smooth(65), 70);
  EXPECT_EQ(fft_next_smooth(121), 125);
  EXPECT_EQ(fft_next_smooth(33, true), 36);  // not 35
  EXPECT_EQ(fft_next_smooth(1, true), 2);
}

TEST(FftGeometry, TransformSizes) {
  // Large kernels on a 64x64 input, where FFT pays off: the full transform is 64x64 exactly
  // (56 and 52 outputs), no rounding up to a smooth size.
  for (const char* d : {"mb16ic32ih64oc32kh9", "mb16ic32ih64oc32kh13"}) {
    const FftGeometry g = fft_geometry(problem(d), Pass::forward);
    EXPECT_EQ(g.h.size, 64) << d;
    EXPECT_EQ(g.w.size, 64) << d;
    EXPECT_EQ(g.bins, 64 * 33) << d;
    EXPECT_FLOAT_EQ(g.scale, 1.0f / 4096) << d;
  }
  // 'Same' padding: top and bottom padding share the wrapped slots, so the size is below
  // the padded extent 64 + 2*4 = 72: needed (O-1) + Rd - P = 63 + 9 - 4 = 68 -> 70.
  const FftGeometry same = fft_geometry(problem("mb1ic1ih64oc1kh9ph4"), Pass::forward);
  EXPECT_EQ(same.h.needed, 68);
  EXPECT_EQ(same.h.size, 70);
  // Stride: input rows past the last window are not needed (227 -> 55 outputs, stride 4).
  const FftGeometry alex = fft_geometry(problem("mb1ic3ih230oc1kh11sh4"), Pass::forward);
  EXPECT_EQ(alex.x.h.count, 54 * 4 + 11);
  EXPECT_EQ(alex.h.needed, 227);
  // The size does not depend on the pass.
  for (const ConvProblem& p : testing::edge_cases()) {
    const FftGeometry f = fft_geometry(p, Pass::forward);
    for (Pass pass : {Pass::backward_data, Pass::backward_filter}) {
      const FftGeometry g = fft_geometry(p, pass);
      EXPECT_EQ(g.h.size, f.h.size) << p.descriptor();
      EXPECT_EQ(g.w.size, f.w.size) << p.descriptor();
    }
  }
}

TEST(FftGeometry, SlotsAndTheirInverse) {
  const FftGeometry g = fft_geometry(problem("mb2ic3ih20oc2kh4sh3ph1dh1"), Pass::forward);
  for (const FftPlacement* pl : {&g.x, &g.wt, &g.y}) {
    for (const FftAxisPlacement* a : {&pl->h, &pl->w}) {
      int64_t placed = 0;
      for (int64_t slot = 0; slot < g.h.size; ++slot) {
        const int64_t i = fft_element_at(*a, slot);
        if (i >= 0) {
          EXPECT_EQ(fft_slot(*a, i), slot);
          ++placed;
        }
      }
      EXPECT_EQ(placed, a->count);
    }
  }
  EXPECT_EQ(fft_slot(g.wt.h, 3), 6);  // dilation 2
  EXPECT_EQ(fft_slot(g.y.w, 2), 6);   // stride 3
  EXPECT_EQ(fft_slot(g.x.h, 0), 1);   // padding 1
}

// One pass computed the way the frequency domain does it, but by direct circular sums over
// the placed Hf x Wf planes (indices mod Hf, Wf), with the channel sums of FftGemm. Integer
// data keeps every sum exact, so the result must equal the reference bit for bit.
std::vector<double> circular_pass(const ConvProblem& p, const FftGeometry& g,
                                  const HostTensors& t, int64_t hf, int64_t wf,
                                  bool strict = true) {
  auto plane_of = [&](FftTensor k, const std::vector<float>& data, int64_t plane) {
    const FftPlacement& pl = fft_placement(g, k);
    const int64_t rows = k == FftTensor::x ? p.h : k == FftTensor::w ? p.r : p.out_h();
    const int64_t cols = k == FftTensor::x ? p.w : k == FftTensor::w ? p.s : p.out_w();
    std::vector<double> out(static_cast<size_t>(hf * wf), 0.0);
    for (int64_t i = 0; i < pl.h.count; ++i) {
      for (int64_t j = 0; j < pl.w.count; ++j) {
        // Placements must stay inside the plane (no modular placement) and one-to-one.
        const int64_t sh = fft_slot(pl.h, i), sw = fft_slot(pl.w, j);
        if (strict) {
          EXPECT_LT(sh, hf);
          EXPECT_LT(sw, wf);
        }
        double& slot = out[static_cast<size_t>((sh % hf) * wf + sw % wf)];
        slot += data[static_cast<size_t>((plane * rows + i) * cols + j)];
      }
    }
    return out;
  };
  const std::vector<float>* data[3] = {&t.x, &t.w, &t.y};
  const FftGemm& m = g.gemm;
  const FftPlacement& out_pl = fft_placement(g, m.out.tensor);
  const int64_t rows = m.out.tensor == FftTensor::x ? p.h : m.out.tensor == FftTensor::w
                                                                 ? p.r : p.out_h();
  const int64_t cols = m.out.tensor == FftTensor::x ? p.w : m.out.tensor == FftTensor::w
                                                                 ? p.s : p.out_w();
  std::vector<double> result(t.output(g.pass).size(), 0.0);
  for (int64_t grp = 0; grp < m.groups; ++grp) {
    for (int64_t i = 0; i < m.m; ++i) {
      for (int64_t j = 0; j < m.n; ++j) {
        std::vector<double> z(static_cast<size_t>(hf * wf), 0.0);
        for (int64_t l = 0; l < m.l; ++l) {
          const auto a = plane_of(m.a.tensor, *data[static_cast<int>(m.a.tensor)],
                                  fft_operand_plane(m.a, grp, i, l));
          const auto b = plane_of(m.b.tensor, *data[static_cast<int>(m.b.tensor)],
                                  fft_operand_plane(m.b, grp, l, j));
          for (int64_t u = 0; u < hf; ++u) {
            for (int64_t v = 0; v < wf; ++v) {
              double sum = 0;
              for (int64_t s = 0; s < hf; ++s) {
                for (int64_t q = 0; q < wf; ++q) {
                  const double bs = b[static_cast<size_t>(s * wf + q)];
                  const double as = a[static_cast<size_t>(s * wf + q)];
                  if (m.b.conj && bs != 0) {  // A conj(B): z[m] = sum_j a[m + j] b[j]
                    sum += a[static_cast<size_t>(((u + s) % hf) * wf + (v + q) % wf)] * bs;
                  } else if (m.a.conj && as != 0) {  // conj(A) B: z[m] = sum_j b[m + j] a[j]
                    sum += b[static_cast<size_t>(((u + s) % hf) * wf + (v + q) % wf)] * as;
                  } else if (!m.a.conj && !m.b.conj && bs != 0) {  // A B: convolution
                    sum += a[static_cast<size_t>(((u - s + hf) % hf) * wf + (v - q + wf) % wf)] *
                           bs;
                  }
                }
              }
              z[static_cast<size_t>(u * wf + v)] += sum;
            }
          }
        }
        const int64_t plane = fft_operand_plane(m.out, grp, i, j);
        for (int64_t r = 0; r < out_pl.h.count; ++r) {
          for (int64_t c = 0; c < out_pl.w.count; ++c) {
            const int64_t sh = fft_slot(out_pl.h, r) % hf, sw = fft_slot(out_pl.w, c) % wf;
            result[static_cast<size_t>((plane * rows + r) * cols + c)] =
                z[static_cast<size_t>(sh * wf + sw)];
          }
        }
      }
    }
  }
  return result;
}

HostTensors reference_result(const ConvProblem& p, Pass pass, HostTensors t) {
  if (pass == Pass::forward) reference::forward(p, t.x.data(), t.w.data(), t.y.data());
  if (pass == Pass::backward_data) reference::backward_data(p, t.y.data(), t.w.data(), t.x.data());
  if (pass == Pass::backward_filter) {
    reference::backward_filter(p, t.x.data(), t.y.data(), t.w.data());
  }
  return t;
}

// Small problems only: the brute force is O(outputs * Hf^2 * Wf^2).
std::vector<ConvProblem> small_corpus(uint64_t seed) {
  std::vector<ConvProblem> problems;
  for (const ConvProblem& p : testing::edge_cases()) {
    if (p.h <= 13 && p.w <= 13 && p.n * p.c * p.k <= 64) problems.push_back(p);
  }
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  while (problems.size() < 120) {
    ConvProblem p;
    p.groups = pick(1, 2);
    p.n = pick(1, 2), p.c = p.groups * pick(1, 2), p.k = p.groups * pick(1, 2);
    p.h = pick(1, 12), p.w = pick(1, 12), p.r = pick(1, 5), p.s = pick(1, 5);
    p.stride_h = pick(1, 3), p.stride_w = pick(1, 3);
    p.dilation_h = pick(1, 3), p.dilation_w = pick(1, 3);
    p.pad_h = pick(0, p.r + 1), p.pad_w = pick(0, p.s + 1);
    try {
      p.validate();
    } catch (const Error&) {
      continue;
    }
    problems.push_back(p);
  }
  return problems;
}

TEST(FftGeometry, NoWraparoundReachesAKeptOutput) {
  const uint64_t seed = testing::run_seed();
  int checked = 0;
  for (const ConvProblem& p : small_corpus(seed)) {
    for (Pass pass : testing::all_passes()) {
      const FftGeometry g = fft_geometry(p, pass);
      const HostTensors t = make_inputs(p, pass, seed + checked, Fill::integers);
      const HostTensors ref = reference_result(p, pass, t);
      const auto got = circular_pass(p, g, t, g.h.size, g.w.size);
      const auto& want = ref.output(pass);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], double(want[i]))
            << p.descriptor() << " " << to_string(pass) << " element " << i << " with "
            << g.h.size << "x" << g.w.size << " (seed " << seed << ")";
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 300);
}

// Whether some tap of some kept output meets an input element along an axis (stride and
// dilation can skip every one: then all products vanish, wrapped or not).
bool axis_meets_data(int64_t size, int64_t pad, int64_t stride, int64_t dilation, int64_t taps,
                     int64_t outputs) {
  for (int64_t o = 0; o < outputs; ++o) {
    for (int64_t u = 0; u < taps; ++u) {
      const int64_t i = o * stride - pad + u * dilation;
      if (i >= 0 && i < size) return true;
    }
  }
  return false;
}

// The size bound is tight where wraparound sets it: one slot less along that axis and a
// kept output picks up a wrapped product, provided the other axis has any product at all.
// (Where one-to-one placement sets it, a smaller plane can still be right by accident of
// linearity; the bound keeps placement simple.)
TEST(FftGeometry, OneSlotLessWraps) {
  const uint64_t seed = testing::run_seed();
  int tight = 0;
  for (const ConvProblem& p : small_corpus(seed + 1)) {
    const FftGeometry g = fft_geometry(p, Pass::forward);
    // Uniform data, and the exact result in double from the right size: an aliased product
    // is ~|w x| (below 1e-9 with probability ~1e-8), double rounding ~1e-15.
    const HostTensors t = make_inputs(p, Pass::forward, seed + tight);
    const auto exact = circular_pass(p, g, t, g.h.size, g.w.size);
    for (int axis = 0; axis < 2; ++axis) {
      const FftAxis& a = axis == 0 ? g.h : g.w;
      const int64_t taps = axis == 0 ? p.dilated_r() : p.dilated_s();
      const int64_t outs = axis == 0 ? (p.out_h() - 1) * p.stride_h + 1
                                     : (p.out_w() - 1) * p.stride_w + 1;
      if (a.needed <= std::max(taps, outs)) continue;
      const bool other = axis == 0 ? axis_meets_data(p.w, p.pad_w, p.stride_w, p.dilation_w,
                                                     p.s, p.out_w())
                                   : axis_meets_data(p.h, p.pad_h, p.stride_h, p.dilation_h,
                                                     p.r, p.out_h());
      if (!other) continue;
      const auto got = circular_pass(p, g, t, axis == 0 ? a.needed - 1 : g.h.size,
                                     axis == 1 ? a.needed - 1 : g.w.size, false);
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - exact[i]));
      EXPECT_GT(worst, 1e-9) << p.descriptor() << " axis " << axis << " (seed " << seed << ")";
      ++tight;
    }
  }
  EXPECT_GE(tight, 20);
}

TEST(FftGeometry, WorkspaceLayout) {
  for (const ConvProblem& p : testing::edge_cases()) {
    for (Pass pass : testing::all_passes()) {
      for (auto layout : {FftSpectrumLayout::frequency_major, FftSpectrumLayout::plane_major}) {
        FftGeometryOptions o;
        o.layout = layout;
        o.bin_multiple = 8;
        o.staging_planes = 16;
        o.library_work_bytes = 1000;
        const FftGeometry g = fft_geometry(p, pass, o);
        const FftBuffer* buffers[] = {&g.spectra_x, &g.spectra_w, &g.spectra_y, &g.staging,
                                      &g.library_work};
        const int64_t ps = layout == FftSpectrumLayout::plane_major ? g.plane_stride : g.bins;
        EXPECT_EQ(g.spectra_x.bytes, p.n * p.c * ps * 8);
        EXPECT_EQ(g.spectra_w.bytes, p.k * p.c_per_group() * ps * 8);
        EXPECT_EQ(g.spectra_y.bytes, p.n * p.k * ps * 8);
        EXPECT_EQ(g.staging.bytes, 16 * g.h.size * g.w.size * 4);
        EXPECT_EQ(g.library_work.bytes, 1000);
        if (layout == FftSpectrumLayout::plane_major) {
          EXPECT_EQ(g.plane_stride % 8, 0);
          EXPECT_GE(g.plane_stride, g.bins);
          EXPECT_LT(g.plane_stride, g.bins + 8);
        }
        int64_t end = 0;
        for (const FftBuffer* b : buffers) {  // in order, aligned, disjoint, library last
          EXPECT_EQ(b->offset % 256, 0);
          EXPECT_GE(b->offset, end);
          EXPECT_LT(b->offset - end, 256);
          end = b->offset + b->bytes;
        }
        EXPECT_EQ(g.total_bytes, end);
        EXPECT_EQ(g.bins, g.h.size * (g.w.size / 2 + 1));
        // The index helper matches the layout.
        const int64_t planes = fft_planes(g, FftTensor::x);
        const int64_t idx = fft_spectrum_index(g, FftTensor::x, planes - 1, g.bins - 1);
        EXPECT_LT(idx * 8, g.spectra_x.bytes);
      }
    }
  }
  // Staging defaults to one plane per plane of the largest tensor (what a GPU would stage).
  const ConvProblem p = problem("mb2ic3ih8oc5kh3");
  const FftGeometry g = fft_geometry(p, Pass::forward);
  EXPECT_EQ(g.staging_planes, 15);
  FftGeometryOptions bad;
  bad.alignment = 48;
  EXPECT_THROW(fft_geometry(p, Pass::forward, bad), Error);
}

// The optional buffers of an executor with contiguous transforms and a store callback: the
// transpose buffer holds the largest tensor's spectra, the header ends exactly where the
// staging starts, and without them the layout is what it was (both 0 bytes, nothing moved).
TEST(FftGeometry, TransposeBufferAndStagingHeader) {
  for (const ConvProblem& p : testing::edge_cases()) {
    for (Pass pass : testing::all_passes()) {
      FftGeometryOptions o;
      o.staging_planes = 3;
      o.library_work_bytes = 100;
      const FftGeometry plain = fft_geometry(p, pass, o);
      EXPECT_EQ(plain.transpose.bytes, 0);
      EXPECT_EQ(plain.staging_header.bytes, 0);
      o.transpose_buffer = true;
      o.staging_header_bytes = 512;
      const FftGeometry g = fft_geometry(p, pass, o);
      const int64_t largest = std::max({p.n * p.c, p.k * p.c_per_group(), p.n * p.k});
      EXPECT_EQ(g.transpose.bytes, 8 * g.bins * largest) << p.descriptor();
      EXPECT_EQ(g.transpose.offset % 256, 0);
      EXPECT_GE(g.transpose.offset, g.spectra_y.offset + g.spectra_y.bytes);
      EXPECT_EQ(g.staging_header.bytes, 512);
      EXPECT_GE(g.staging_header.offset, g.transpose.offset + g.transpose.bytes);
      EXPECT_EQ(g.staging_header.offset + 512, g.staging.offset) << p.descriptor();
      EXPECT_EQ(g.staging.bytes, plain.staging.bytes);
      EXPECT_EQ(g.total_bytes - plain.total_bytes, (g.transpose.bytes + 255) / 256 * 256 + 512);
    }
  }
  const ConvProblem p = problem("mb2ic3ih8oc5kh3");
  FftGeometryOptions bad;
  bad.staging_header_bytes = 100;  // not a multiple of the alignment
  EXPECT_THROW(fft_geometry(p, Pass::forward, bad), Error);
}

}  // namespace
}  // namespace convlab
