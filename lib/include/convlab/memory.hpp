#pragma once
/// \file
/// The memory model: what one pass of one algorithm needs, what a network needs to train at
/// a batch size, the largest batch that fits a budget, and budget-aware selection.
///
///     PassMemory m = pass_memory(registry().get("cpu.fft"), problem, Pass::forward);
///     m.total()  // x + w + y + workspace, bytes
///     Selection s = select(problem, Pass::forward, parse_size("3.5GiB"), &timings);
///
/// Every formula is written term by term in docs/memory-model.md. The workspace of a pass
/// is never estimated here: it is what the algorithm's plan reports (plan->workspace_bytes(),
/// the exact figure its run() uses). An algorithm that cannot plan on this machine (a CUDA
/// algorithm without a device) has no figure, and says so (MemorySource::unavailable).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/cards.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/problem.hpp"

namespace convlab {

/// Where the workspace figure of a PassMemory comes from.
enum class MemorySource {
  plan,         ///< plan(problem, pass)->workspace_bytes(): exact
  unsupported,  ///< the algorithm does not implement this case; no figure (reason says why)
  unavailable,  ///< the algorithm cannot plan here (e.g. no CUDA device); no figure
};
const char* to_string(MemorySource source) noexcept;

/// The memory of one pass of one algorithm on one problem.
/// The three tensors keep their roles of Tensors (algorithm.hpp): x is the input (dx for
/// backward-data), w the filter (dw for backward-filter), y the output (dy for both backward
/// passes); each pass holds exactly these three plus the workspace.
struct PassMemory {
  std::string algorithm;
  ConvProblem problem;
  Pass pass = Pass::forward;
  MemorySource source = MemorySource::plan;
  std::string reason;     ///< why there is no figure (unsupported, unavailable); else empty
  TensorBytes tensors;    ///< x, w, y bytes (known for every valid problem)
  int64_t workspace = 0;  ///< bytes; meaningful only when known()
  std::string notes;      ///< the plan's notes (e.g. the FFT size), for reports
  bool known() const { return source == MemorySource::plan; }
  /// x + w + y + workspace. Throws Error{unsupported or unavailable} with the reason when
  /// the workspace is not known.
  int64_t total() const;
};

/// The memory of (algorithm, problem, pass), from its plan with `knobs` (a knob such as the
/// images sharing a column buffer changes the workspace). Throws Error{invalid_problem} for
/// an invalid problem; an unsupported case or an algorithm that cannot plan here comes back
/// with that source and reason rather than as an exception.
PassMemory pass_memory(const Algorithm& algorithm, const ConvProblem& problem, Pass pass,
                       const KnobValues& knobs = {});

/// The tensor names of a pass's three roles, for reports: {"x", "w", "y"} forward,
/// {"dx", "w", "dy"} backward-data, {"x", "dw", "dy"} backward-filter.
struct RoleNames {
  const char* x;
  const char* w;
  const char* y;
};
RoleNames role_names(Pass pass) noexcept;

/// Assumptions of the network model (docs/memory-model.md).
struct NetworkOptions {
  bool training = true;      ///< false: inference (forward only, nothing kept, no gradients)
  int optimizer_states = 1;  ///< state buffers per weight: 0 plain SGD, 1 momentum, 2 Adam
};

/// The memory a network (a suite of conv layers with repeat counts) needs at a batch size.
/// Training:  total = weights + weight_gradients + optimizer_state + activations
///                    + gradient_buffers + workspace
/// Inference: total = weights + activations + workspace, where activations is the largest
///            x + y of one layer (only the current layer's input and output live).
struct NetworkMemory {
  int64_t batch = 0;
  bool training = true;
  int64_t weights = 0;           ///< sum over layers of repeat * w bytes
  int64_t weight_gradients = 0;  ///< = weights (training), else 0
  int64_t optimizer_state = 0;   ///< optimizer_states * weights (training), else 0
  int64_t activations = 0;       ///< training: sum of repeat * x bytes (every conv input
                                 ///< is kept for backward-filter); inference: max x + y
  int64_t gradient_buffers = 0;  ///< training: max over layers of dy + dx bytes, else 0
  int64_t workspace = 0;         ///< the largest workspace of the chosen cases (one
                                 ///< buffer shared by every layer, as frameworks do)
  std::string workspace_case;    ///< "layer pass algorithm" of that workspace
  /// The case of every layer and pass, with the algorithm chosen for it.
  std::vector<PassMemory> cases;
  /// Cases no preferred algorithm could plan ("layer pass: reasons"); empty when complete.
  std::vector<std::string> missing;
  bool complete() const { return missing.empty(); }
  /// The sum of the terms above; Error{unsupported} listing the missing cases unless
  /// complete().
  int64_t total() const;
};

/// The network memory at batch `batch` (each layer's n replaced by it) with, for every layer
/// and pass, the first algorithm of `preference` whose memory is known (supported and
/// plannable here). Error{invalid_argument} for an empty suite or preference, a batch < 1 or
/// optimizer_states < 0.
NetworkMemory network_memory(const std::vector<Layer>& suite, int64_t batch,
                             const std::vector<const Algorithm*>& preference,
                             const NetworkOptions& options = {});

/// The largest batch whose network memory fits `budget_bytes`.
struct BatchFit {
  int64_t batch = 0;     ///< 0 when not even batch 1 fits (or the model is incomplete)
  bool capped = false;   ///< true when `max_batch` itself still fits
  NetworkMemory memory;  ///< at `batch` (at batch 1 when batch is 0)
  /// Why batch + 1 does not fit: "memory" when it needs more than the budget, else the
  /// case no algorithm could plan there (e.g. a 32-bit index limit). Empty when capped.
  std::string limit;
};
/// Searches batch sizes 1..max_batch: the tensor terms alone bound the batch from above
/// (b_max, no plans needed); bisection on the total below b_max finds a boundary, and the
/// 32 batches above the last one found to fit are tried too, because a workspace may
/// shrink slightly as the batch grows (cpu.im2col's depends on how the batch splits among
/// threads). Exact unless a workspace shrinks again more than 32 batches past a boundary.
/// When nothing fits, batch is 0 and memory is the model at batch 1 (memory.missing says
/// why when the model is incomplete).
BatchFit largest_batch(const std::vector<Layer>& suite,
                       const std::vector<const Algorithm*>& preference, int64_t budget_bytes,
                       const NetworkOptions& options = {}, int64_t max_batch = 1 << 20);

/// Measured times of cases, keyed by (problem, pass, algorithm).
class TimingTable {
 public:
  TimingTable() = default;
  explicit TimingTable(const std::vector<MeasuredTime>& times);
  /// Adds a time; a later time for the same case replaces the earlier one.
  void add(const ConvProblem& problem, Pass pass, std::string_view algorithm, double time_ms);
  std::optional<double> find(const ConvProblem& problem, Pass pass,
                             std::string_view algorithm) const;
  std::size_t size() const { return times_.size(); }

 private:
  std::map<std::string, double> times_;
};

/// What select() may choose from and how it estimates times it has not measured.
struct SelectOptions {
  /// The algorithms to choose among; empty means every registered algorithm except the
  /// reference (a correctness anchor, not a strategy).
  std::vector<const Algorithm*> candidates;
  /// The card predictions are made for when a time is not measured. Without it, and
  /// without measured times, select() has nothing to rank by: Error{invalid_argument}.
  const Card* card = nullptr;
  const Calibration* calibration = nullptr;  ///< applied to predictions when given
};

/// One candidate as select() judged it.
struct Candidate {
  enum class Status {
    fits,          ///< fits the budget, and has a time
    over_budget,   ///< its total memory exceeds the budget
    unsupported,   ///< the algorithm does not implement the case
    unavailable,   ///< the algorithm cannot plan here
    not_measured,  ///< fits, but has no measured time while others do (not comparable)
  };
  const Algorithm* algorithm = nullptr;
  PassMemory memory;
  Status status = Status::fits;
  double time_ms = 0;     ///< measured or predicted (fits only)
  bool measured = false;  ///< time_ms is a measurement, not a prediction
};
const char* to_string(Candidate::Status status) noexcept;

/// The outcome of select().
struct Selection {
  const Algorithm* chosen = nullptr;  ///< the fastest that fits; nullptr when none fits
  double time_ms = 0;                 ///< the chosen one's time
  bool measured = false;              ///< ranked by measurements (else by predictions)
  std::vector<Candidate> candidates;  ///< every candidate in order, with its status
  /// One line, e.g. "cpu.im2col (12.3 ms measured, 40.1 MiB); cpu.fft over budget".
  std::string describe() const;
};

/// The fastest algorithm whose total memory (tensors + workspace, PassMemory::total) fits
/// `budget_bytes`. Ranked by the measured times in `timings` when any fitting candidate has
/// one (candidates without are then not_measured: a roofline is not comparable with a
/// measurement), else by predict() on options.card. Ties go to the earlier candidate.
/// Error{invalid_argument} for a budget < 1, or when a prediction is needed and no card was
/// given. A case nothing fits is no error: chosen is nullptr.
Selection select(const ConvProblem& problem, Pass pass, int64_t budget_bytes,
                 const TimingTable* timings = nullptr, const SelectOptions& options = {});

}  // namespace convlab
