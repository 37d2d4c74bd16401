#pragma once
// The memory budget of a sweep: --memory-budget and --card.

#include <cstdint>
#include <optional>
#include <string>

#include "convlab/cards.hpp"
#include "options/cli.hpp"

namespace convbench {

/// The --memory-budget / --card budget: the smaller when both are given.
struct Budget {
  int64_t bytes = 0;
  std::string label;  ///< e.g. "3.50 GiB (--memory-budget 3.5GiB)"
};
/// Parses the budget flags (loading --cards files first); UsageError for bad values.
std::optional<Budget> resolve_budget(const RunOptions& options, convlab::CardDatabase& cards);

}  // namespace convbench
