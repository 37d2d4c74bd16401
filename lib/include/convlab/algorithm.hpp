#pragma once
/// \file
/// The one interface every convolution strategy implements.
///
///     const Algorithm& algo = registry().get("cpu.fft");
///     const AlgorithmInfo& info = algo.info();       // family, backend, knobs, determinism
///     Support s = algo.supports(problem, pass);      // ok, or a reason
///     auto plan = algo.plan(problem, pass, {{"planner", "estimate"}});  // knobs validated
///     std::size_t ws = plan->workspace_bytes();      // exact
///     const PlanInfo& chosen = plan->info();         // kernel, sizes, knobs as resolved
///     plan->run(tensors, workspace);                 // fast, repeatable, allocates nothing
///     plan->run(tensors, workspace, Stream{my_cuda_stream});  // a GPU plan on the caller's
///                                                    // cudaStream_t, capturable into a graph
///
/// The caller-provided workspace is the whole memory contract: everything a plan needs at
/// run time beyond the tensors themselves comes out of it, vendor scratch included.
/// Algorithms describe themselves through AlgorithmInfo and PlanInfo: prediction, error
/// bounds, reports and tests read those, never an algorithm's name or free text.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/knobs.hpp"
#include "convlab/problem.hpp"

namespace convlab {

class DeviceContext;

/// Where an algorithm's tensors and workspace live.
enum class Device { cpu, gpu };
const char* to_string(Device device) noexcept;

/// The strategy an algorithm implements (DESIGN's families); `vendor` is a library's own
/// choice among its strategies (cuDNN's search, oneDNN's auto).
enum class Family { reference, direct, gemm, fft, fft_tiled, winograd, vendor };
const char* to_string(Family family) noexcept;
/// The family to_string() names; Error{invalid_argument} quoting anything else.
Family parse_family(std::string_view text);

/// The arithmetic the products and sums are done in. fp32: IEEE single precision throughout
/// (FMA allowed). tf32: products of inputs rounded to TF32 (10-bit mantissa) on tensor cores.
enum class MathMode { fp32, tf32 };
const char* to_string(MathMode mode) noexcept;

/// What an algorithm is, independent of any problem.
struct AlgorithmInfo {
  std::string name;         ///< the registry name, e.g. "cpu.fft"
  Device device = Device::cpu;
  Family family = Family::direct;
  std::string backend;      ///< the libraries doing the work, e.g. "fftw", "cufft+cublas"
  std::string description;  ///< one line for `convbench list`
  /// Whether repeated runs with the same inputs and knobs give bitwise identical outputs,
  /// in one process and across processes.
  bool deterministic = true;
  /// The math mode of its plans under default knobs (a plan's PlanInfo has the actual one).
  MathMode math_mode = MathMode::fp32;
  std::vector<KnobSpec> knobs;  ///< the knobs plan() accepts
};

/// What planning chose for one problem and pass. Every field is a column of a result row.
struct PlanInfo {
  /// The implementation that runs, as its library names it where it has a name: e.g.
  /// "gemm openblas", "jit:avx2", "CUDNN_CONVOLUTION_FWD_ALGO_FFT".
  std::string kernel;
  std::string transform;  ///< transform size where there is one, e.g. "fft 32x32", "F(4,3)"
  std::string tile;       ///< tile size where the strategy tiles, e.g. "16x16"
  MathMode math_mode = MathMode::fp32;
  /// The workspace by purpose, summing to workspace_bytes(), e.g. {"columns", 4718592}.
  std::vector<std::pair<std::string, std::size_t>> workspace_split;
  KnobValues knobs;  ///< every knob of the algorithm as this plan resolved it
  /// Other facts of this plan (name, value), in a stable order.
  std::vector<std::pair<std::string, std::string>> details;
  /// One line for people: the fields above that are set.
  std::string describe() const;
  /// workspace_split as one field: "columns=4718592;gemm=0".
  std::string format_workspace_split() const;
};

/// A stream to run on: a CUDA stream (cudaStream_t) for GPU algorithms; null means the
/// algorithm's own stream. CPU algorithms ignore it.
struct Stream {
  void* handle = nullptr;
};

/// Whether an algorithm implements a problem; when not, why (never empty then).
struct Support {
  bool ok = true;
  std::string reason;
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

/// The tensors of one pass, as pointers on the algorithm's device, NCHW / KCRS, dense.
/// Roles by pass (the output is overwritten, beta = 0):
///   forward:         reads x, w;  writes y
///   backward_data:   reads y (dy), w;  writes x (dx)
///   backward_filter: reads x, y (dy);  writes w (dw)
struct Tensors {
  float* x = nullptr;
  float* w = nullptr;
  float* y = nullptr;
};

/// Scratch memory handed to Plan::run on the algorithm's device.
struct Workspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// A problem and pass made ready to run. Planning did every allocation-free-at-run-time
/// preparation; run() may be called any number of times with any tensors of the shape.
class Plan {
 public:
  virtual ~Plan() = default;
  /// The exact number of bytes run() needs in its workspace.
  virtual std::size_t workspace_bytes() const = 0;
  /// Computes the pass on `stream`. Throws Error{invalid_argument} if the workspace is
  /// smaller than workspace_bytes() or a needed pointer is null. Allocates nothing on the
  /// heap or device beyond what vendor libraries do internally (documented per algorithm).
  void run(const Tensors& tensors, const Workspace& workspace, Stream stream = {}) {
    execute(tensors, workspace, stream);
  }
  /// What planning chose, with the knobs as resolved.
  const PlanInfo& info() const { return info_; }
  /// info() as one line, for reports.
  std::string notes() const { return info_.describe(); }
  /// The bound this plan's outputs keep against the reference (accuracy.hpp); convbench
  /// --check and the tests fail a case that exceeds it. A plan whose knobs change its
  /// numerics (a transform variant, a chunking of sums) overrides it; otherwise it is the
  /// algorithm's error_bound() for the planned problem and pass.
  virtual ErrorBound error_bound() const { return algorithm_bound_; }
  /// The phases of the last run with their milliseconds, where the plan measures them
  /// (e.g. {"inputs", 1.2}, {"products", 3.4}); empty otherwise. For micro-benchmarks.
  virtual std::vector<std::pair<std::string, double>> last_run_phases() const { return {}; }

 protected:
  virtual void execute(const Tensors& tensors, const Workspace& workspace, Stream stream) = 0;
  /// Filled by the derived plan when it is made; Algorithm::plan() adds the knobs.
  PlanInfo info_;

 private:
  friend class Algorithm;
  ErrorBound algorithm_bound_;
};

/// A convolution strategy.
class Algorithm {
 public:
  virtual ~Algorithm() = default;
  /// What this algorithm is: name, family, backend, determinism, math mode, knobs.
  virtual const AlgorithmInfo& info() const = 0;
  /// The registry name, e.g. "cpu.fft".
  const std::string& name() const { return info().name; }
  Device device() const { return info().device; }
  const std::string& description() const { return info().description; }
  bool deterministic() const { return info().deterministic; }
  /// Whether this algorithm can run at all on this machine (e.g. a CUDA device is present).
  virtual Support available() const { return Support::yes(); }
  /// Whether this algorithm implements the (valid) problem and pass. Throws
  /// Error{invalid_problem} for an invalid problem.
  virtual Support supports(const ConvProblem& problem, Pass pass) const = 0;
  /// Prepares the pass with `knobs` (validated against info().knobs; the rest default).
  /// Throws Error{unsupported} with the reason when supports() says no,
  /// Error{invalid_problem} for an invalid problem, Error{unavailable} when not available(),
  /// Error{invalid_argument} for a bad knob.
  std::unique_ptr<Plan> plan(const ConvProblem& problem, Pass pass,
                             const KnobValues& knobs = {}) const;
  /// The bound its outputs keep against the reference (see accuracy.hpp) under default
  /// knobs; what a plan is held to is Plan::error_bound(), which starts from this.
  virtual ErrorBound error_bound(const ConvProblem&, Pass) const { return {}; }
  /// The memory, copy and timing services of this algorithm's device (under default knobs).
  virtual DeviceContext& context() const = 0;
  /// The device a plan made with `knobs` (as given to plan()) runs on: its tensors and
  /// workspace belong there. Differs from context() where a knob picks the device (the GPU
  /// algorithms' `device`). Throws as plan() does for a bad knob.
  virtual DeviceContext& plan_context(const KnobValues& knobs) const {
    (void)knobs;
    return context();
  }

 protected:
  /// Makes the plan; `knobs` holds every knob of info().knobs, validated.
  virtual std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                          const KnobValues& knobs) const = 0;
};

/// Checks the common preconditions of Plan::run; throws Error{invalid_argument} naming the
/// algorithm and what is missing.
void check_run_arguments(const std::string& algorithm, const ConvProblem& problem, Pass pass,
                         const Tensors& tensors, const Workspace& workspace,
                         std::size_t workspace_needed);

}  // namespace convlab
