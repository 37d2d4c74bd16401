// cpu.fft_tiled: FFT convolution over output tiles, so that the transform size, and with it
// every spectrum, is bounded by the tile instead of the image.
//
// ---------------------------------------------------------------------------------------
// Derivation (what tiled_plan.cpp implements; the index math is strategy/tiled_fft_geometry.hpp)
// ---------------------------------------------------------------------------------------
// 1. Tiles. The forward output grid is cut into Th x Tw tiles; along an axis, tile t's
//    outputs o = t*T + j read input rows o*S - P + u*D, all inside the patch of
//    (T-1)*S + Rd rows starting at t*T*S - P. So each (image, tile) pair is an unpadded
//    convolution of a patch, with the layer's kernel, stride, dilation and groups, whose
//    output is exactly the tile. Zeros stand in for the padding and for input rows that meet
//    no kept output (at or beyond E = (OH-1)S + Rd - P), and dy's overhang past OH.
//
// 2. Passes on pairs. The pairs are images of a sub-problem (n' = pairs of a batch,
//    h' x w' = patch, pad 0), and cpu.fft's plan runs that sub-problem, its derivation
//    (cpu_fft.cpp) unchanged:
//      forward          y tile = fwd(x patch, w): tiles partition y, each is copied out
//                       (overlap-save: the inputs overlap, the outputs do not);
//      backward-data    dx patch = bwd_data(dy tile, w): the adjoint of the forward copy-out
//                       is the sum of the overlapping patches into dx (overlap-add);
//      backward-filter  dw = sum over all pairs of bwd_filter(x patch, dy tile): the sub-
//                       problem sums over its pairs as over images; batches add up.
//
// 3. Memory. The sub-problem's transform is Hf' x Wf' >= the patch, so the three spectra of
//    a batch are 8 B' (batch*C + K*C/g + batch*K) bytes with B' ~ Hf' (Wf'/2 + 1): the tile,
//    not the image, sets B'; the batch (pairs per FFT run) sets how many planes. Plus the
//    gathered patches and tiles of one batch (4 batch (C patch + K tile)), a dw partial for
//    backward-filter, and cpu.fft's staging (tiled_fft_geometry.hpp has the layout).
//    The filter spectra (8 B' K C/g) do not shrink with the batch: they are the floor.
//
// 4. Cost. Per axis the tiles recompute patch/(T*S) of the input, so transforms and products
//    grow by about (patch / (T*S))^2 against one big transform of the image, while each
//    transform gets cheaper per point (log of a smaller size) and fits the cache. The filter
//    is transformed once per batch. Defaults (strategy header): patch ~ 4 dilated kernels,
//    batch ~ K C/g / (C + K) pairs, so a batch's spectra are about the filter's and
//    the workspace about twice the filter spectra plus the gathered copies; up to 4x that
//    where the batch's spectra stay within 8 MiB (few channels: the filter transform would
//    otherwise cost as much as the batch's); at least 8 pairs.
//
// 5. Error bound (normwise per output plane, accuracy.hpp). Each pair obeys cpu.fft's bound,
//    ||e_pair|| <= 4 eps log2(Hf' Wf') sum_reduced ||a_pair|| ||b||. An input element lies in
//    at most ov = ov_h ov_w patches (tiled_fft_overlap), so the patches' squared norms sum to
//    at most ov ||a||^2, and Minkowski (forward: disjoint tiles) or Cauchy-Schwarz over at
//    most ov overlapping patches (backward-data), and over the pairs of an image
//    (backward-filter) give ||e_plane|| <= 4 sqrt(ov) eps log2(Hf' Wf') sum ||a|| ||b||.
//    Backward-filter adds the batches' partial sums: at most (batches - 1) more roundings of
//    terms each below that sum, i.e. (batches - 1) / log2(Hf' Wf') more in the factor.
//    error_bound() cannot see the plan's knobs, so it states the bound of the default tiling.
//
// 6. Threads: convlab::num_threads() at plan time, cpu.fft's worker pool for the gathers and
//    scatters (planes are split, each output element is written by one task in a fixed order)
//    and inside cpu.fft's plan: runs are bitwise reproducible.
// ---------------------------------------------------------------------------------------

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "strategy/tiled_fft_host.hpp"
#include "tiled_plan.hpp"

namespace convlab {
namespace {

constexpr const char* kName = "cpu.fft_tiled";

class CpuFftTiledAlgorithm final : public Algorithm {
 public:
  const AlgorithmInfo& info() const override {
    static const AlgorithmInfo kInfo{
        kName,
        Device::cpu,
        Family::fft_tiled,
        "fftw",
        "FFT over output tiles (overlap-save forward, overlap-add backward): cpu.fft on "
        "tile-sized patches, memory bounded by the tile",
        /*deterministic=*/true,
        MathMode::fp32,
        knobs()};
    return kInfo;
  }
  // The tiling's own knobs, then cpu.fft's for its plans of the tiles.
  static std::vector<KnobSpec> knobs() {
    std::vector<KnobSpec> all = tiled_fft_knobs();
    for (KnobSpec& spec : cpu_fft::fft_plan_knobs(
             "FFTW planner rigour of cpu.fft's plans of the tiles (as cpu.fft's)",
             "instruction set of the per-bin GEMM (as cpu.fft's)")) {
      all.push_back(std::move(spec));
    }
    return all;
  }

  Support supports(const ConvProblem& problem, Pass pass) const override {
    problem.validate();
    try {
      cpu_fft_tiled::cpu_tiled_geometry(problem, pass, {}, num_threads());
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_problem) throw;
      return Support::no(std::string("tiled FFT workspace size overflows int64: ") + e.what());
    }
    return Support::yes();
  }

  ErrorBound error_bound(const ConvProblem& problem, Pass pass) const override {
    // The default tiling's; a plan states its own (TiledPlan::error_bound()).
    return cpu_fft_tiled::tiled_error_bound(tiled_fft_geometry(problem, pass));
  }

  DeviceContext& context() const override { return host_context(); }

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues& knobs) const override {
    const Support support = supports(problem, pass);
    if (!support) {
      throw Error(ErrorCode::unsupported, std::string(kName) + " " + to_string(pass) + " " +
                                              problem.descriptor() + ": " + support.reason);
    }
    return std::make_unique<cpu_fft_tiled::TiledPlan>(
        problem, pass, tiled_fft_options(knobs), num_threads(),
        cpu_isa(knob_text(knobs, "isa"), "cpu.fft_tiled.isa"), knob_text(knobs, "planner"));
  }
};

}  // namespace

void register_cpu_fft_tiled(Registry& registry) {
  registry.add(std::make_unique<CpuFftTiledAlgorithm>());
}

}  // namespace convlab
