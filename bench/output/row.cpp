#include "output/row.hpp"

#include <cmath>
#include <cstdio>

namespace convbench {

const char* to_string(Status status) noexcept {
  switch (status) {
    case Status::ok: return "ok";
    case Status::unsupported: return "unsupported";
    case Status::over_budget: return "over_budget";
    case Status::error: return "error";
  }
  return "?";
}

namespace {

Cell cell_of(const std::string& text) { return text; }

template <typename T>
Cell cell_of(const std::optional<T>& value) {
  if (!value) return std::monostate{};
  return *value;
}

// The cell of a field of Row as it is (text, or an optional number: absent when unset), so
// that a column is its name and its field, and no column can read another's field.
template <auto Field>
Cell field_cell(const Row& row) {
  return cell_of(row.*Field);
}

}  // namespace

const std::vector<Column>& row_columns() {
  static const std::vector<Column> columns = {
      {"suite", field_cell<&Row::suite>},
      {"layer", field_cell<&Row::layer>},
      {"descriptor", field_cell<&Row::descriptor>},
      {"pass", field_cell<&Row::pass>},
      {"algorithm", field_cell<&Row::algorithm>},
      {"device", field_cell<&Row::device>},
      {"status", [](const Row& r) -> Cell { return std::string(to_string(r.status)); }},
      {"reason", field_cell<&Row::reason>},
      {"plan_ms", field_cell<&Row::plan_ms>},
      {"time_ms", field_cell<&Row::time_ms>},
      {"time_ms_min", field_cell<&Row::time_ms_min>},
      {"time_ms_max", field_cell<&Row::time_ms_max>},
      {"reps", field_cell<&Row::reps>},
      {"cv", field_cell<&Row::cv>},
      {"gflops", field_cell<&Row::gflops>},
      {"workspace_bytes", field_cell<&Row::workspace_bytes>},
      {"total_bytes", field_cell<&Row::total_bytes>},
      {"max_abs_err", field_cell<&Row::max_abs_err>},
      {"max_rel_err", field_cell<&Row::max_rel_err>},
      {"plan_kernel", field_cell<&Row::plan_kernel>},
      {"plan_transform", field_cell<&Row::plan_transform>},
      {"plan_tile", field_cell<&Row::plan_tile>},
      {"plan_workspace_split", field_cell<&Row::plan_workspace_split>},
      {"plan_details", field_cell<&Row::plan_details>},
      {"knobs", field_cell<&Row::knobs>},
      {"math_mode", field_cell<&Row::math_mode>},
      {"family", field_cell<&Row::family>},
  };
  return columns;
}

std::string format_real(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string format_range(double low, double high) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "(%.3g\u2013%.3g)", low, high);
  return buffer;
}

void Summary::add(const Row& row) {
  switch (row.status) {
    case Status::ok: ++ok; break;
    case Status::unsupported: ++unsupported; break;
    case Status::over_budget: ++over_budget; break;
    case Status::error: ++error; break;
  }
}

std::string Summary::line() const {
  return std::to_string(total()) + " cases: " + std::to_string(ok) + " ok, " +
         std::to_string(unsupported) + " unsupported, " + std::to_string(over_budget) +
         " over_budget, " + std::to_string(error) + " error";
}

}  // namespace convbench
