#pragma once
// The inputs of a case: filled once per layer and pass (every algorithm of the group sees the
// same tensors, and the harness does not pay for them once per algorithm), by --fill.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/cases.hpp"
#include "convlab/accuracy.hpp"

namespace convbench {

/// --fill random|integers|nan@I|inf@I: the library's fill, and optionally one element of the
/// pass's first input (x, or dy for bwd_data) replaced by NaN or +Inf, so that IEEE
/// propagation can be seen from the command line.
struct FillSpec {
  enum class Poison { none, nan, inf };
  convlab::Fill fill = convlab::Fill::uniform;
  Poison poison = Poison::none;
  int64_t index = 0;          ///< the element poisoned (flat NCHW index)
  std::string text = "random";  ///< as given, for the metadata
};

/// Parses --fill; UsageError naming the bad value and the accepted ones.
FillSpec parse_fill(const std::string& text);

/// The number of elements of the pass's first input (the one --fill nan@I/inf@I poisons).
int64_t first_input_elements(const convlab::ConvProblem& problem, convlab::Pass pass);

/// UsageError when --fill nan@I/inf@I names an element past the end of the first input of
/// any case (the first input differs per pass), naming I, the case and its element count.
void check_fill_fits(const FillSpec& fill, const std::vector<Case>& cases);

/// Holds the inputs of the last (layer, pass) asked for; cases come layer-major with the
/// algorithms innermost, so one entry serves a whole group.
class InputCache {
 public:
  InputCache(uint64_t sweep_seed, FillSpec fill) : seed_(sweep_seed), fill_(std::move(fill)) {}
  /// The inputs of the case's layer and pass (its output role poisoned with NaN).
  const convlab::HostTensors& get(const Case& c);
  /// Whether the inputs of `c` are the ones held (get() would allocate nothing).
  bool holds(const Case& c) const;
  /// The seed the inputs of `c` are made from.
  uint64_t seed_of(const Case& c) const;

 private:
  uint64_t seed_;
  FillSpec fill_;
  std::optional<std::string> key_;
  convlab::HostTensors tensors_;
};

}  // namespace convbench
