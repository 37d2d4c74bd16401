// cpu.fft: convolution as FFTW transforms and per-frequency complex matrix products.
//
// ---------------------------------------------------------------------------------------
// Derivation (what the code below and fft_plan.cpp implement)
// ---------------------------------------------------------------------------------------
// 1. Circular identities. For real planes a, b of F1 x F2 = Hf x Wf points and the DFT
//    A^[k] = sum_m a[m] e^{-2 pi i <k, m/F>} (FFTW's sign, unnormalised):
//      correlation  z[m] = sum_j a[m + j] b[j]   (indices mod F)   <=>  Z^ = A^ . conj(B^)
//      convolution  z[m] = sum_j a[j] b[m - j]                     <=>  Z^ = A^ . B^
//    (conj(B^) because b is real: the DFT of b[-m] is conj(B^)).
//
// 2. Placement (strategy/fft_geometry.hpp derives it and proves there is no wraparound;
//    Hf, Wf are the smallest 2,3,5,7-smooth sizes that avoid it, Wf rounded to an even one
//    because FFTW plans odd-length r2c rows only with solvers that allocate in execute):
//    x[ih, iw] at slot (ih + pad_h, iw + pad_w); filter tap w[r, s] at (r*dil_h, s*dil_w)
//    (the zero-inserted dilated filter); y[oh, ow] at (oh*stride_h, ow*stride_w) (dy
//    upsampled by the stride). Writing x~, w~, y~ for the placed planes:
//      forward:   y[n,k,oh,ow] = sum_c (x~[n,c] corr w~[k,c]) at slot of (oh, ow)
//      bwd data:  dx[n,c,ih,iw] = sum_k (dy~[n,k] conv w~[k,c]) at slot of (ih, iw)
//      bwd filter: dw[k,c,r,s] = sum_n (x~[n,c] corr dy~[n,k]) at slot of (r, s)
//    The read-back is the crop (forward: subsample by the stride; backward-data: drop the
//    padding; backward-filter: the R x S lags, dilated).
//
// 3. Channel sums become complex matrix products, one per bin b (per group g, with
//    C' = C/g and K' = K/g channels of the group):
//      forward:    Y^[N x K'] = X^[N x C'] . W^[K' x C']^H      Y^ = X^ conj(W^)^T
//      bwd data:   Dx^[N x C'] = Dy^[N x K'] . W^[K' x C']
//      bwd filter: Dw^[K' x C'] = Dy^[N x K']^H . X^[N x C']
//    The conjugates are those of step 1: correlations conjugate the second operand.
//
// 4. Half spectrum. The planes are real, so every spectrum is Hermitian, Z^[-k] =
//    conj(Z^[k]); products and sums of Hermitian spectra (conjugated or not) stay
//    Hermitian, so only the B = Hf * (Wf/2 + 1) bins of the r2c half spectrum are computed
//    and the c2r transform supplies the rest (it ignores the imaginary parts of the bins
//    that must be real, the DC and Nyquist columns, which here hold only rounding).
//
// 5. Normalisation. FFTW's inverse is unnormalised, IDFT(DFT(z)) = Hf*Wf*z, so the read-back
//    multiplies by scale = 1/(Hf*Wf); this is the only place the scale enters.
//
// 6. Transforms as rows then columns. A 2-D r2c transform is Hf row r2c transforms (length
//    Wf) followed by Wf/2+1 complex column transforms (length Hf). Rows that are zero give
//    zero spectra rows, so only the placed rows are transformed (R rows of a filter, OH
//    rows of dy, the used rows of x) and the others are zeroed; the inverse computes all
//    columns and then only the rows that are read back. This is why the plans are guru64 rank-1 plans over
//    (planes x rows) rather than one 2-D plan_many: at 64x64 with a 9x9 filter the filter
//    transform costs half as much (bench/micro/fft_conv.cpp, docs/strategy-fft.md).
//
// 7. Layout and the GEMM mapping. Spectra are plane-major: plane p (x: n*C + c, w: k*C' + c',
//    y: n*K + k, the tensors' own order) holds its B bins contiguously, padded to B' (a
//    multiple of 8 bins), and within a plane the bins are column-major (kw*Hf + kh) so the
//    column transforms are unit-stride. FFTW then reads and writes unit stride, and the
//    per-bin product runs vectorised across bins: a SIMD vector holds 8 consecutive bins of
//    one plane, and out(g,i,j)[b] = sum_l opA(A(g,i,l)[b]) opB(B(g,l,j)[b]) is a
//    register-tiled GEMM whose "scalars" are those vectors (bin_gemm_kernel.inc). Element
//    (g, i, j) of an operand is plane g*group + i*row + j*col (FftGemm in fft_geometry.hpp):
//    e.g. forward A = X^ has (group, row, col) = (C', C, 1) and B = conj(W^)^T has
//    (K'C', 1, C'). The bin order does not matter to the product, which is elementwise in
//    bins. The frequency-major layout (per-bin matrices contiguous, what cuBLAS batches)
//    would let cblas_cgemm do each bin, but makes FFTW write with stride N*C, which more than
//    doubles the transform time that dominates, and small per-bin GEMMs (C = 3, depthwise)
//    run far below peak in BLAS (docs/strategy-fft.md has the measurements).
//
// 8. Workspace (bytes), T threads, q = 8 planes per chunk:
//      8 * B' * (N*C + K*C' + N*K)      the three spectra (x, w, y)
//    + 4 * T * q * Hf * Wf              real staging, one chunk per thread
//    each buffer at a 256-byte-aligned offset. FFTW keeps no work area in the workspace:
//    its plans hold their own, made at plan time, and FFTW_NO_BUFFERING keeps execute from
//    allocating (fftw_plans.cpp), so run() allocates nothing.
//
// 9. Threads: convlab::num_threads() at plan time, one level of parallelism (chunks of
//    planes, then ranges of bins, then chunks of output planes) over single-threaded FFTW
//    plans and the bin GEMM; no BLAS, Eigen or FFTW thread pool runs underneath, so nothing
//    nests. Each output element is computed by the same operations whatever the thread
//    count or schedule: runs are bitwise reproducible.
// ---------------------------------------------------------------------------------------

#include <cmath>
#include <memory>
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/threads.hpp"
#include "fft_plan.hpp"
#include "convlab/registry.hpp"

namespace convlab {
namespace {

class CpuFftAlgorithm final : public Algorithm {
 public:
  const AlgorithmInfo& info() const override {
    static const AlgorithmInfo kInfo{
        "cpu.fft",
        Device::cpu,
        Family::fft,
        "fftw",
        "FFTW r2c/c2r (rows, then columns) + per-frequency complex GEMM over channels, "
        "vectorised across bins",
        /*deterministic=*/true,
        MathMode::fp32,
        cpu_fft::fft_plan_knobs(
            "FFTW planner rigour; only estimate picks the same codelets in every "
            "process (bitwise reproducible), measure and above time candidates",
            "instruction set of the per-bin GEMM; auto is the best this CPU "
            "runs")};
    return kInfo;
  }

  Support supports(const ConvProblem& problem, Pass pass) const override {
    problem.validate();
    try {
      cpu_fft::cpu_fft_geometry(problem, pass, num_threads());
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_problem) throw;
      return Support::no(std::string("FFT workspace size overflows int64: ") + e.what());
    }
    return Support::yes();
  }

  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    const Support support = supports(problem, pass);
    if (!support) {
      throw Error(ErrorCode::unsupported, "cpu.fft " + std::string(to_string(pass)) + " " +
                                              problem.descriptor() + ": " + support.reason);
    }
    const CpuIsa isa = cpu_isa(knob_text(knobs, "isa"), "cpu.fft.isa");
    return std::make_unique<cpu_fft::FftPlan>(problem, pass, num_threads(), isa,
                                              knob_text(knobs, "planner"));
  }

  // Normwise bound, per output plane: ||e||_2 <= factor * eps * log2(Hf*Wf) *
  // sum_reduced ||a||_2 ||b||_2 (accuracy.hpp). Where the error comes from, for one pair of
  // planes (a, b) and relative FFT error eta ~ eps*log2(Hf*Wf) per transform (FFTW's
  // Cooley-Tukey error grows with the number of butterfly stages, log2 of the size):
  //   three transforms (a, b, and the inverse) each add eta * ||a||_2 ||b||_2 * kappa, where
  //   kappa = max|B^| / rms|B^| is the spectral peak of the other operand (a few for random
  //   data, 1 for a delta); the complex product and the channel sum add eps-sized relative
  //   terms per bin that the sum over channels in the bound already dominates.
  // So factor ~ 3 * kappa. With factor 4 the worst error over 12,000 random test cases was
  // 0.17 of the bound (docs/strategy-fft.md): a margin of about 6x, while a 1e-5 relative
  // error anywhere still fails.
  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    const FftGeometry g = cpu_fft::cpu_fft_geometry(problem, pass, 1);
    ErrorBound bound;
    bound.kind = ErrorBound::Kind::normwise;
    bound.factor = kBoundFactor;
    bound.log2_size = std::log2(static_cast<double>(g.h.size) * static_cast<double>(g.w.size));
    return bound;
  }

  DeviceContext& context() const override { return host_context(); }

 private:
  static constexpr double kBoundFactor = 4.0;
};

}  // namespace

void register_cpu_fft(Registry& registry) { registry.add(std::make_unique<CpuFftAlgorithm>()); }

}  // namespace convlab
