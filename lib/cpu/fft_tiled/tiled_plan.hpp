#pragma once
// The plan of cpu.fft_tiled: the tiling of strategy/tiled_fft_geometry.hpp around cpu.fft's
// own plan of the per-batch sub-problem (see the derivation in cpu_fft_tiled.cpp).

#include <memory>
#include <string>

#include "convlab/algorithm.hpp"
#include "cpu/fft/fft_plan.hpp"
#include "strategy/tiled_fft_geometry.hpp"

namespace convlab::cpu_fft_tiled {

/// The tiling cpu.fft_tiled runs with `threads` workers, its FFT workspace included (that of
/// cpu.fft's plan of the full batch's sub-problem). Throws as tiled_fft_geometry().
TiledFftGeometry cpu_tiled_geometry(const ConvProblem& problem, Pass pass,
                                    const TiledFftOptions& options, int threads);

/// The normwise bound of a tiling (derivation in cpu_fft_tiled.cpp, step 5): cpu.fft's per
/// pair, times sqrt of the patch overlap, plus the batches' partial sums in backward-filter.
ErrorBound tiled_error_bound(const TiledFftGeometry& geometry);

class TiledPlan final : public Plan {
 public:
  /// `isa` and `planner` are cpu.fft's knobs, for its plans of the sub-problem.
  TiledPlan(const ConvProblem& problem, Pass pass, const TiledFftOptions& options, int threads,
            CpuIsa isa, const std::string& planner);
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(geometry_.total_bytes);
  }
  const TiledFftGeometry& geometry() const { return geometry_; }
  /// The bound of this plan's own tiling (the tile and batch knobs change it).
  ErrorBound error_bound() const override { return tiled_error_bound(geometry_); }

 protected:
  void execute(const Tensors& tensors, const Workspace& workspace, Stream stream) override;

 private:
  struct Ops;  // the steps of strategy/tiled_fft_passes.hpp
  void gather_patches(TiledBatch b, const float* source, float* patches) const;
  void gather_tiles(TiledBatch b, const float* source, float* tiles) const;
  void scatter_tiles(TiledBatch b, const float* tiles, float* y) const;
  void add_patches(TiledBatch b, const float* patches, float* dx) const;
  void describe_plan();

  ConvProblem problem_;
  Pass pass_;
  int threads_;
  TiledFftGeometry geometry_;
  // cpu.fft's plans of the sub-problem: a full batch, and the shorter last one if any.
  std::unique_ptr<cpu_fft::FftPlan> full_, last_;
  std::string where_;  // built here so that run() allocates nothing
};

}  // namespace convlab::cpu_fft_tiled
