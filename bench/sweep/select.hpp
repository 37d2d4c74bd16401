#pragma once
// --select: the row naming the algorithm convlab::select would choose for a layer and pass.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "output/row.hpp"
#include "sweep/budgets.hpp"
#include "sweep/cases.hpp"

namespace convbench {

/// Emits --select rows: collects each (layer, pass) group's rows and, once the group is
/// complete, adds a row with algorithm "select" naming the fastest measured algorithm that
/// fits the budget (convlab::select), its time and memory.
class SelectTracker {
 public:
  /// `cases` is the whole sweep (before --shard and --resume), for the group sizes.
  SelectTracker(const std::vector<Case>& cases, std::optional<Budget> budget);
  /// A row of the sweep (run now or read back by --resume). Returns the select row when it
  /// completes its group.
  std::optional<Row> add(const Row& row);
  /// Marks the group of a select row read back by --resume as done.
  void already_written(const Row& select_row);

 private:
  struct Group {
    const Case* first = nullptr;
    std::set<std::string> expected;  ///< algorithm names
    std::vector<Row> rows;
    bool written = false;
  };
  Row select_row(const Group& group) const;
  std::map<std::string, Group> groups_;  ///< by descriptor + pass
  std::optional<Budget> budget_;
};

}  // namespace convbench
