#pragma once
/// \file
/// The one interface every convolution strategy implements.
///
///     const Algorithm& algo = registry().get("cpu.fft");
///     Support s = algo.supports(problem, pass);      // ok, or a reason
///     std::unique_ptr<Plan> plan = algo.plan(problem, pass);   // slow: FFT plans, sizes
///     std::size_t ws = plan->workspace_bytes();      // exact
///     plan->run(tensors, workspace);                 // fast, repeatable, allocates nothing
///
/// The caller-provided workspace is the whole memory contract: everything a plan needs at
/// run time beyond the tensors themselves comes out of it, vendor scratch included.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "convlab/accuracy.hpp"
#include "convlab/problem.hpp"

namespace convlab {

class DeviceContext;

/// Where an algorithm's tensors and workspace live.
enum class Device { cpu, gpu };
const char* to_string(Device device) noexcept;

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
  /// Computes the pass. Throws Error{invalid_argument} if the workspace is smaller than
  /// workspace_bytes() or a needed pointer is null. Allocates nothing on the heap or device
  /// beyond what vendor libraries do internally (documented per algorithm).
  virtual void run(const Tensors& tensors, const Workspace& workspace) = 0;
  /// Free-form facts about the plan for reports, e.g. the FFT size or cuDNN's pick.
  virtual std::string notes() const { return {}; }
};

/// A convolution strategy.
class Algorithm {
 public:
  virtual ~Algorithm() = default;
  /// The registry name, e.g. "cpu.fft".
  virtual std::string name() const = 0;
  virtual Device device() const = 0;
  /// One line for `convbench list`.
  virtual std::string description() const = 0;
  /// Whether repeated runs with the same inputs give bitwise identical outputs.
  virtual bool deterministic() const = 0;
  /// Whether this algorithm can run at all on this machine (e.g. a CUDA device is present).
  virtual Support available() const { return Support::yes(); }
  /// Whether this algorithm implements the (valid) problem and pass. Throws
  /// Error{invalid_problem} for an invalid problem.
  virtual Support supports(const ConvProblem& problem, Pass pass) const = 0;
  /// Prepares the pass. Throws Error{unsupported} with the reason when supports() says no,
  /// Error{invalid_problem} for an invalid problem, Error{unavailable} when not available().
  virtual std::unique_ptr<Plan> plan(const ConvProblem& problem, Pass pass) const = 0;
  /// The bound its outputs keep against the reference (see accuracy.hpp); convbench --check
  /// and the tests fail a case that exceeds it.
  virtual ErrorBound error_bound(const ConvProblem&, Pass) const { return {}; }
  /// The memory, copy and timing services of this algorithm's device.
  virtual DeviceContext& context() const = 0;
};

/// Checks the common preconditions of Plan::run; throws Error{invalid_argument} naming the
/// algorithm and what is missing.
void check_run_arguments(const std::string& algorithm, const ConvProblem& problem, Pass pass,
                         const Tensors& tensors, const Workspace& workspace,
                         std::size_t workspace_needed);

}  // namespace convlab
