#pragma once
// The plan of cpu.fft: FFTW plans, the geometry and the three phases of run() (see the
// derivation in cpu_fft.cpp).

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bin_gemm.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/knobs.hpp"
#include "fftw_plans.hpp"
#include "strategy/fft_geometry.hpp"

namespace convlab::cpu_fft {

/// Planes one FFTW execution transforms. Eight keeps a chunk's spectra (8 x B x 8 bytes,
/// 135 KB at 64x64) in the L2 cache between the row and column halves (4, 8 and 16 measured
/// equal within noise); the chunk is doubled where it would break the 64-byte alignment of
/// the per-worker staging.
int64_t chunk_planes(const FftGeometry& geometry_without_staging);

/// cpu.fft's knobs, planner then isa, for every algorithm that plans cpu.fft's FftPlan (cpu.fft
/// itself, and cpu.fft_tiled on its tiles); only what the documentation says differs.
std::vector<KnobSpec> fft_plan_knobs(const std::string& planner_doc, const std::string& isa_doc);

/// The geometry cpu.fft runs with `threads` workers: plane-major spectra, bins padded to a
/// multiple of 8, one chunk of staging planes per worker.
FftGeometry cpu_fft_geometry(const ConvProblem& problem, Pass pass, int threads);

class FftPlan final : public Plan {
 public:
  /// `planner` is one of planner_names(); `isa` one this CPU runs.
  FftPlan(const ConvProblem& problem, Pass pass, int threads, CpuIsa isa,
          const std::string& planner);
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(geometry_.total_bytes);
  }
  /// Once run: the last run's inputs, products and output phases.
  std::vector<std::pair<std::string, double>> last_run_phases() const override;
  const FftGeometry& geometry() const { return geometry_; }

 protected:
  void execute(const Tensors& tensors, const Workspace& workspace, Stream stream) override;

 private:
  void describe_plan();
  // One FFTW plan per (kind, tensor, planes in the chunk): the full chunk and each
  // tensor's last, shorter one.
  enum class Kind { rows_forward, columns_forward, columns_inverse, rows_inverse };
  struct Entry {
    Kind kind;
    FftTensor tensor;
    int64_t planes;
    FftwPlan plan;
  };
  struct RunState;
  void make_plans(FftTensor tensor, bool inverse);
  const FftwPlan& find(Kind kind, FftTensor tensor, int64_t planes) const;
  void transform_chunk(const RunState& s, FftTensor tensor, int64_t first, int64_t planes,
                       int worker) const;
  void inverse_chunk(const RunState& s, int64_t first, int64_t planes, int worker) const;

  ConvProblem problem_;
  Pass pass_;
  int threads_;
  CpuIsa isa_;
  FftGeometry geometry_;
  int64_t chunk_ = 8;
  int64_t staging_stride_ = 0;  // floats of staging per worker
  std::vector<Entry> plans_;
  std::string planner_;
  unsigned planner_flags_ = 0;
  std::string where_;  // "cpu.fft <pass> <descriptor>", built here so run() allocates nothing
  // The last run's phases (inputs, products, output); atomic because runs of one
  // plan with different workspaces may overlap.
  std::atomic<double> last_ms_[3] = {-1.0, -1.0, -1.0};
};

}  // namespace convlab::cpu_fft
