// The budget flags (sweep/budgets.hpp).
#include "sweep/budgets.hpp"

#include "convlab/error.hpp"
#include "convlab/memory.hpp"

namespace convbench {

std::optional<Budget> resolve_budget(const RunOptions& o, convlab::CardDatabase& cards) {
  try {
    for (const std::string& file : o.cards) cards.add_json_file(file);
    std::optional<Budget> budget;
    if (o.memory_budget) {
      const int64_t bytes = convlab::parse_size(*o.memory_budget);
      budget = Budget{bytes,
                      convlab::format_size(bytes) + " (--memory-budget " + *o.memory_budget + ")"};
    }
    if (o.card) {
      const convlab::Card& card = cards.get(*o.card);
      if (!budget || card.usable_bytes < budget->bytes) {
        budget = Budget{card.usable_bytes,
                        card.id + " usable " + convlab::format_size(card.usable_bytes)};
      }
    }
    return budget;
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace convbench
