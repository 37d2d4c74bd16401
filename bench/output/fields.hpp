#pragma once
// The rows of the report commands (memory, predict, compare): a text cell per column, the
// column saying its type, so that CSV writes the text and JSON writes numbers as numbers
// without guessing from the text or the name.

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "output/context.hpp"

namespace convbench {

enum class FieldType { text, integer, real };

struct FieldColumn {
  std::string name;
  FieldType type = FieldType::text;
};

/// Consecutive columns of one type, given by their names: a long run of byte counts is one
/// list, e.g. {FieldType::integer, {"x_bytes", "w_bytes", "y_bytes"}}.
struct FieldColumns {
  FieldType type = FieldType::text;
  std::vector<std::string> names;
};

/// The columns of `runs`, in order.
std::vector<FieldColumn> columns_of(const std::vector<FieldColumns>& runs);

/// The columns of a per-case report row (memory, predict): kind, suite, layer, descriptor,
/// pass, algorithm, then `more`.
std::vector<FieldColumn> case_columns(const std::vector<FieldColumns>& more);

/// One row: column name -> text (a column a row lacks is absent).
using Fields = std::map<std::string, std::string>;

/// Writes `rows` as CSV: the context's `# key: value` lines, a header of `columns`, then
/// one line per row (a column a row lacks is empty).
void write_fields_csv(std::ostream& out, const Context& context,
                      const std::vector<FieldColumn>& columns, const std::vector<Fields>& rows);

/// What JSON writes for a column a row lacks.
enum class AbsentField { null, omitted };
/// What JSON writes for an empty text cell (an empty number is always null).
enum class EmptyText { null, empty_string };

/// One row as a JSON object in column order: integer and real columns as numbers.
nlohmann::ordered_json fields_json(const Fields& row, const std::vector<FieldColumn>& columns,
                                   AbsentField absent, EmptyText empty = EmptyText::null);

/// Writes {"context": ..., SECTION: [rows of that kind], ...}: `sections` maps each value of
/// the "kind" column to its section's name, in the order written; the kind itself is left out
/// of the objects.
void write_fields_json(std::ostream& out, const Context& context,
                       const std::vector<FieldColumn>& columns, const std::vector<Fields>& rows,
                       AbsentField absent, EmptyText empty,
                       const std::vector<std::pair<std::string, std::string>>& sections);

}  // namespace convbench
