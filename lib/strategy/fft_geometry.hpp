#pragma once
/// \file
/// The geometry of FFT-domain convolution, shared by cpu.fft and cuda.fft.
///
/// Every tensor of a pass is placed in an Hf x Wf real plane by one rule per tensor, the
/// same in all three passes (per axis; i counts elements of the tensor along the axis):
///
///   x (input, dx):   element i at slot i*1 + pad       for i < x_count  ("data" rows)
///   w (filter, dw):  tap i     at slot i*dilation      for i < R        (zero-inserted)
///   y (output, dy):  element i at slot i*stride        for i < OH       (upsampled)
///
/// and every pass reads its result at its output tensor's slots:
///
///   forward          y = x (*) w     Y^ = X^ . conj(W^)   (correlation)
///   backward-data    x = y  *  w     X^ = Y^ . W^         (convolution)
///   backward-filter  w = x (*) y     W^ = X^ . conj(Y^)   (correlation)
///
/// Why this holds without wraparound (one axis; L, P, S, D, R, O the input size, padding,
/// stride, dilation, taps, outputs; Rd = (R-1)D + 1). All three passes sum the products
/// x[i] w[u] y[o] over the triples with  o*S + u*D = i + P; the circular versions sum over
/// o*S + u*D == i + P (mod F) instead. With v = o*S + u*D in [0, (O-1)S + Rd) and
/// t = i + P in [P, x_count + P), v - t lies in (-(x_count + P), E) where
/// E = (O-1)S + Rd - P, so no nonzero multiple of F is reachable when
///
///   F >= max(E, x_count + P)                       (no wraparound reaches a kept output)
///   F >= Rd,  F >= (O-1)S + 1,  F >= x_count + P   (each placement is one-to-one)
///
/// x_count = clamp(E, 0, L): input rows at or beyond E meet no tap of any kept output, so
/// they are not placed (forward, backward-filter) and receive exact zeros (backward-data).
/// Padding needs no zeros of its own: top and bottom padding may share the wrapped slots,
/// which is why F can be smaller than the padded extent L + 2P. The transform size is the
/// smallest 2,3,5,7-smooth F at or above that bound (for Wf the smallest even one when
/// options.even_w asks), and it is the same for all passes.
///
/// The half spectrum of a real Hf x Wf plane has B = Hf * (Wf/2 + 1) bins. The three
/// complex buffers hold the spectra of all planes of x (N*C), w (K*C/g) and y (N*K), each
/// bin a complex float (8 bytes), in one of two layouts:
///   frequency_major  element (plane p, bin b) at  b * planes + p   (per-bin matrices
///                    contiguous: batched GEMM libraries, cuBLAS)
///   plane_major      element (plane p, bin b) at  p * plane_stride + b  (each plane's
///                    spectrum contiguous: the FFT reads and writes unit stride; a GEMM
///                    vectorised across bins)
/// Workspace = spectra of x + w + y, the optional transpose buffer, the optional staging
/// header, real staging (staging_planes planes of Hf*Wf floats), and the FFT library's work
/// area, each at an offset aligned to `alignment`, in that order; the executor supplies the
/// staging plane count, the library's work-area bytes and whether it needs the two optional
/// buffers:
///   transpose       8 * B * max(N*C, K*C/g, N*K) bytes: the plane-major spectra of one
///                   tensor, for an executor whose transforms write (read) each plane's
///                   spectrum contiguously and which transposes them to (from) the layout
///                   its per-bin products read
///   staging header  `staging_header_bytes` (a multiple of `alignment`) ending exactly where
///                   the staging starts: for a transform-library callback that is handed the
///                   staging pointer and finds its run's parameters just before it
///
/// The per-bin matrix product of each pass is described by FftGemm: for group g and bin b,
///   out(g, i, j) = sum_l  opA(A(g, i, l)) * opB(B(g, l, j))
/// where a tensor element (g, i, j) is spectrum plane g*group + i*row + j*col.
///
/// fft_geometry() runs on the host (it validates and may throw). The CONVLAB_HD helpers are
/// pure int64_t math on plain structs, so CUDA kernels take FftGeometry by value.

#include <cstdint>
#include <string>

#include "convlab/error.hpp"
#include "convlab/problem.hpp"
#include "strategy/hd.hpp"

namespace convlab {

/// Where a tensor's elements sit along one axis of the transform plane.
struct FftAxisPlacement {
  int64_t offset = 0;  ///< slot of element 0
  int64_t step = 1;    ///< slots from one element to the next
  int64_t count = 0;   ///< elements placed (may be 0: nothing of this tensor is used)
};

/// Where a tensor's plane sits in the transform plane.
struct FftPlacement {
  FftAxisPlacement h, w;
};

/// The transform size along one axis and how it was reached.
struct FftAxis {
  int64_t size = 1;    ///< F: 2,3,5,7-smooth, >= needed
  int64_t needed = 1;  ///< the smallest size without wraparound or overlapping placements
};

enum class FftSpectrumLayout { frequency_major, plane_major };
enum class FftTensor { x, w, y };

/// One byte range of the workspace.
struct FftBuffer {
  int64_t offset = 0;
  int64_t bytes = 0;
};

/// One operand of the per-bin product: spectrum plane of element (g, i, j) is
/// g*group + i*row + j*col; conj says whether the operand enters conjugated.
struct FftOperand {
  FftTensor tensor = FftTensor::x;
  bool conj = false;
  int64_t group = 0, row = 0, col = 0;
};

/// The per-bin matrix product of a pass, per group: out[m x n] = opA(A)[m x l] opB(B)[l x n].
struct FftGemm {
  int64_t groups = 1, m = 0, n = 0, l = 0;
  FftOperand a, b, out;
};

/// What the executor decides.
struct FftGeometryOptions {
  FftSpectrumLayout layout = FftSpectrumLayout::frequency_major;
  /// Real staging planes of Hf*Wf floats; 0 means one per plane of the largest tensor.
  int64_t staging_planes = 0;
  /// The FFT library's work area (cufftGetSize, or 0 where the library keeps its own).
  int64_t library_work_bytes = 0;
  /// Alignment of every buffer offset (bytes, a power of two).
  int64_t alignment = 256;
  /// plane_major only: the plane stride is B rounded up to a multiple of this many bins,
  /// so each plane starts aligned and a vector of bins never straddles two planes.
  int64_t bin_multiple = 1;
  /// Make Wf the smallest EVEN smooth size >= the needed width. FFTW plans odd-length r2c
  /// and c2r rows only with its buffered solvers, which allocate inside every execute.
  bool even_w = false;
  /// Reserve the transpose buffer (file comment).
  bool transpose_buffer = false;
  /// Bytes of the staging header (file comment): 0, or a multiple of `alignment`.
  int64_t staging_header_bytes = 0;
};

/// Everything an executor needs to run one pass of one problem by FFT.
struct FftGeometry {
  Pass pass = Pass::forward;
  FftAxis h, w;            ///< Hf = h.size, Wf = w.size (even if options.even_w)
  int64_t half_w = 1;      ///< Wf/2 + 1: complex columns of the half spectrum
  int64_t bins = 1;        ///< B = Hf * half_w
  FftPlacement x, wt, y;   ///< placements of x, w and y (wt: the filter)
  int64_t x_planes = 0;    ///< N*C
  int64_t w_planes = 0;    ///< K*C/g
  int64_t y_planes = 0;    ///< N*K
  FftSpectrumLayout layout = FftSpectrumLayout::frequency_major;
  int64_t plane_stride = 0;  ///< plane_major: complex elements between planes (>= bins)
  FftBuffer spectra_x, spectra_w, spectra_y, staging, library_work;
  FftBuffer transpose;       ///< 0 bytes unless options.transpose_buffer
  FftBuffer staging_header;  ///< ends at staging.offset; 0 bytes unless asked for
  int64_t staging_planes = 0;
  int64_t total_bytes = 0;  ///< the workspace of the pass
  float scale = 1.0f;       ///< 1/(Hf*Wf): FFTW and cuFFT inverses are unnormalised
  FftTensor input_a = FftTensor::x, input_b = FftTensor::w, output = FftTensor::y;
  FftGemm gemm;
};

/// Whether n >= 1 has no prime factor above 7.
CONVLAB_HD bool fft_is_smooth(int64_t n) {
  if (n < 1) return false;
  const int64_t primes[4] = {2, 3, 5, 7};
  for (int i = 0; i < 4; ++i) {
    while (n % primes[i] == 0) n /= primes[i];
  }
  return n == 1;
}

/// The smallest 2,3,5,7-smooth size >= n (n >= 1). A linear scan would be cheap for the
/// sizes of real layers but not for every valid problem: near 10^15 smooth numbers are
/// ~10^11 apart, so a scan would hang (found by fuzz/). Instead, for every 3^b 5^c 7^d
/// below the bound, take its least power-of-two multiple >= n: O(log^3 n) candidates, each
/// below the next power of two (< 2n), so nothing overflows. Sizes above 2^62 are refused
/// with Error{invalid_problem} (no transform of that size can be allocated anyway).
/// With `even`, the smallest even one (each odd candidate doubled; 2^k >= n is even).
inline int64_t fft_next_smooth(int64_t n, bool even = false) {
  if (n <= 1) return even ? 2 : 1;
  constexpr int64_t kMax = int64_t{1} << 62;
  if (n > kMax) {
    throw Error(ErrorCode::invalid_problem,
                "FFT transform size " + std::to_string(n) + " exceeds 2^62");
  }
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t p7 = 1; p7 < best; p7 = p7 > best / 7 ? best : p7 * 7) {
    for (int64_t p5 = p7; p5 < best; p5 = p5 > best / 5 ? best : p5 * 5) {
      for (int64_t p3 = p5; p3 < best; p3 = p3 > best / 3 ? best : p3 * 3) {
        int64_t m = p3;
        while (m < n) m *= 2;
        if (even && m % 2 != 0) m *= 2;  // m = p3 < best <= 2^62 here: no overflow
        if (m < best) best = m;
      }
    }
  }
  return best;
}

/// Input elements along an axis that meet a tap of a kept output: clamp(E, 0, size) with
/// E = (outputs-1)*stride + dilated_taps - pad.
CONVLAB_HD int64_t fft_used_inputs(int64_t size, int64_t pad, int64_t stride,
                                   int64_t dilated_taps, int64_t outputs) {
  const int64_t e = (outputs - 1) * stride + dilated_taps - pad;
  return e < 0 ? 0 : (e > size ? size : e);
}

/// The smallest transform size along an axis for which no wraparound reaches a kept output
/// and every placement is one-to-one (see the file comment).
CONVLAB_HD int64_t fft_needed_size(int64_t size, int64_t pad, int64_t stride,
                                   int64_t dilated_taps, int64_t outputs) {
  const int64_t used = fft_used_inputs(size, pad, stride, dilated_taps, outputs);
  const int64_t e = (outputs - 1) * stride + dilated_taps - pad;
  int64_t need = dilated_taps;
  const int64_t y_extent = (outputs - 1) * stride + 1;
  if (y_extent > need) need = y_extent;
  if (used > 0) {
    if (e > need) need = e;
    if (used + pad > need) need = used + pad;
  }
  return need;
}

/// Slot of element i of a placement along its axis.
CONVLAB_HD int64_t fft_slot(const FftAxisPlacement& a, int64_t i) { return a.offset + i * a.step; }

/// The element placed at `slot` along the axis, or -1 where the slot holds a zero (the
/// gather form of staging: one slot reads at most one element).
CONVLAB_HD int64_t fft_element_at(const FftAxisPlacement& a, int64_t slot) {
  const int64_t d = slot - a.offset;
  if (d < 0 || d % a.step != 0) return -1;
  const int64_t i = d / a.step;
  return i < a.count ? i : -1;
}

/// The placement of a tensor in the plane.
CONVLAB_HD const FftPlacement& fft_placement(const FftGeometry& g, FftTensor t) {
  return t == FftTensor::x ? g.x : t == FftTensor::w ? g.wt : g.y;
}

/// Planes of a tensor: N*C, K*C/g or N*K.
CONVLAB_HD int64_t fft_planes(const FftGeometry& g, FftTensor t) {
  return t == FftTensor::x ? g.x_planes : t == FftTensor::w ? g.w_planes : g.y_planes;
}

/// Index (in complex elements) of bin b of spectrum plane p of a tensor's buffer.
CONVLAB_HD int64_t fft_spectrum_index(const FftGeometry& g, FftTensor t, int64_t plane,
                                      int64_t bin) {
  return g.layout == FftSpectrumLayout::plane_major ? plane * g.plane_stride + bin
                                                    : bin * fft_planes(g, t) + plane;
}

/// Bin of half-spectrum row kh (< Hf) and column kw (< Wf/2 + 1), in the row-major order of
/// a 2-D r2c transform (cuFFT, FFTW). The per-bin products are elementwise in bins, so an
/// executor may order bins within a plane otherwise (cpu.fft: column-major, kw*Hf + kh).
CONVLAB_HD int64_t fft_bin(const FftGeometry& g, int64_t kh, int64_t kw) {
  return kh * g.half_w + kw;
}

/// Spectrum plane of element (group, i, j) of an operand of the per-bin product.
CONVLAB_HD int64_t fft_operand_plane(const FftOperand& o, int64_t group, int64_t i, int64_t j) {
  return group * o.group + i * o.row + j * o.col;
}

/// The host function both executors call: the transform size, placements, per-bin product
/// and every workspace buffer of one pass. Throws Error{invalid_problem} for an invalid
/// problem or a workspace whose size overflows int64_t, Error{invalid_argument} for bad
/// options.
inline FftGeometry fft_geometry(const ConvProblem& p, Pass pass,
                                const FftGeometryOptions& options = {}) {
  p.validate();
  const int64_t align = options.alignment;
  if (align < 1 || (align & (align - 1)) != 0 || options.bin_multiple < 1 ||
      options.staging_planes < 0 || options.library_work_bytes < 0 ||
      options.staging_header_bytes < 0 || options.staging_header_bytes % align != 0) {
    throw Error(ErrorCode::invalid_argument,
                "fft_geometry " + p.descriptor() + ": bad options (alignment " +
                    std::to_string(align) + ", bin_multiple " +
                    std::to_string(options.bin_multiple) + ", staging_planes " +
                    std::to_string(options.staging_planes) + ", library_work_bytes " +
                    std::to_string(options.library_work_bytes) + ", staging_header_bytes " +
                    std::to_string(options.staging_header_bytes) + ")");
  }
  FftGeometry g;
  g.pass = pass;
  g.layout = options.layout;
  const int64_t oh = p.out_h(), ow = p.out_w();
  g.h.needed = fft_needed_size(p.h, p.pad_h, p.stride_h, p.dilated_r(), oh);
  g.w.needed = fft_needed_size(p.w, p.pad_w, p.stride_w, p.dilated_s(), ow);
  g.h.size = fft_next_smooth(g.h.needed);
  g.w.size = fft_next_smooth(g.w.needed, options.even_w);
  g.half_w = g.w.size / 2 + 1;
  g.bins = checked_mul(g.h.size, g.half_w, "FFT bins");
  g.x = {{p.pad_h, 1, fft_used_inputs(p.h, p.pad_h, p.stride_h, p.dilated_r(), oh)},
         {p.pad_w, 1, fft_used_inputs(p.w, p.pad_w, p.stride_w, p.dilated_s(), ow)}};
  g.wt = {{0, p.dilation_h, p.r}, {0, p.dilation_w, p.s}};
  g.y = {{0, p.stride_h, oh}, {0, p.stride_w, ow}};
  const int64_t cg = p.c_per_group(), kg = p.k_per_group();
  g.x_planes = checked_mul(p.n, p.c, "x planes");
  g.w_planes = checked_mul(p.k, cg, "w planes");
  g.y_planes = checked_mul(p.n, p.k, "y planes");
  g.scale = static_cast<float>(1.0 / (static_cast<double>(g.h.size) * g.w.size));

  // The per-bin products. Planes: x (n, c) = n*C + c, w (k, c') = k*Cg + c', y (n, k).
  const FftOperand x_nc{FftTensor::x, false, cg, p.c, 1};        // (i = n, j = c)
  const FftOperand y_nk{FftTensor::y, false, kg, p.k, 1};        // (i = n, j = k)
  const FftOperand w_kc{FftTensor::w, false, kg * cg, cg, 1};    // (i = k, j = c')
  FftGemm& m = g.gemm;
  m.groups = p.groups;
  if (pass == Pass::forward) {  // y[n,k] = sum_c x[n,c] conj(w[k,c])
    m.m = p.n, m.n = kg, m.l = cg;
    m.a = x_nc;
    m.b = {FftTensor::w, true, kg * cg, 1, cg};  // (l = c', j = k): the transpose of w_kc
    m.out = y_nk;
    g.input_a = FftTensor::x, g.input_b = FftTensor::w, g.output = FftTensor::y;
  } else if (pass == Pass::backward_data) {  // dx[n,c] = sum_k dy[n,k] w[k,c]
    m.m = p.n, m.n = cg, m.l = kg;
    m.a = y_nk;
    m.b = w_kc;
    m.out = x_nc;
    g.input_a = FftTensor::y, g.input_b = FftTensor::w, g.output = FftTensor::x;
  } else {  // dw[k,c] = sum_n conj(dy[n,k]) x[n,c]
    m.m = kg, m.n = cg, m.l = p.n;
    m.a = {FftTensor::y, true, kg, 1, p.k};  // (i = k, l = n): the transpose of y_nk
    m.b = x_nc;
    m.out = w_kc;
    g.input_a = FftTensor::y, g.input_b = FftTensor::x, g.output = FftTensor::w;
  }

  // The workspace.
  const int64_t bm = options.bin_multiple;
  g.plane_stride = options.layout == FftSpectrumLayout::plane_major
                       ? checked_mul((g.bins + bm - 1) / bm, bm, "FFT plane stride")
                       : g.bins;
  const int64_t complex_bytes = 8;
  const int64_t plane_bytes = checked_mul(g.plane_stride, complex_bytes, "spectrum bytes");
  int64_t largest = g.x_planes > g.w_planes ? g.x_planes : g.w_planes;
  if (g.y_planes > largest) largest = g.y_planes;
  g.staging_planes = options.staging_planes > 0 ? options.staging_planes : largest;
  const int64_t real_plane = checked_mul(g.h.size, g.w.size, "FFT plane");
  int64_t offset = 0;
  auto place = [&](FftBuffer& buffer, int64_t bytes) {
    offset = checked_add(offset, align - 1, "FFT workspace") / align * align;
    buffer = {offset, bytes};
    offset = checked_add(offset, bytes, "FFT workspace");
  };
  place(g.spectra_x, checked_mul(g.x_planes, plane_bytes, "x spectra bytes"));
  place(g.spectra_w, checked_mul(g.w_planes, plane_bytes, "w spectra bytes"));
  place(g.spectra_y, checked_mul(g.y_planes, plane_bytes, "y spectra bytes"));
  place(g.transpose,
        options.transpose_buffer ? checked_mul(largest, plane_bytes, "transpose buffer bytes") : 0);
  // Both aligned, the header a multiple of the alignment: the staging starts where it ends.
  place(g.staging_header, options.staging_header_bytes);
  place(g.staging,
        checked_mul(checked_mul(g.staging_planes, real_plane, "staging"), 4, "staging bytes"));
  place(g.library_work, options.library_work_bytes);
  g.total_bytes = offset;
  return g;
}

/// The buffer of a tensor's spectra.
CONVLAB_HD const FftBuffer& fft_spectra(const FftGeometry& g, FftTensor t) {
  return t == FftTensor::x ? g.spectra_x : t == FftTensor::w ? g.spectra_w : g.spectra_y;
}

}  // namespace convlab
