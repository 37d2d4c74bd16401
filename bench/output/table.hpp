#pragma once
// The one table printer: rows of cells in aligned columns, numbers right-aligned.

#include <ostream>
#include <string>
#include <vector>

namespace convbench {

/// Prints `titles`, a rule, then `rows`; a column whose cells are all numbers (or empty) is
/// right-aligned. Trailing blanks are dropped.
void print_table(std::ostream& out, const std::vector<std::string>& titles,
                 const std::vector<std::vector<std::string>>& rows);

}  // namespace convbench
