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

template <typename T>
Cell optional_cell(const std::optional<T>& value) {
  if (!value) return std::monostate{};
  return *value;
}

}  // namespace

const std::vector<Column>& row_columns() {
  static const std::vector<Column> columns = {
      {"suite", [](const Row& r) -> Cell { return r.suite; }},
      {"layer", [](const Row& r) -> Cell { return r.layer; }},
      {"descriptor", [](const Row& r) -> Cell { return r.descriptor; }},
      {"pass", [](const Row& r) -> Cell { return r.pass; }},
      {"algorithm", [](const Row& r) -> Cell { return r.algorithm; }},
      {"device", [](const Row& r) -> Cell { return r.device; }},
      {"status", [](const Row& r) -> Cell { return std::string(to_string(r.status)); }},
      {"reason", [](const Row& r) -> Cell { return r.reason; }},
      {"plan_ms", [](const Row& r) { return optional_cell(r.plan_ms); }},
      {"time_ms", [](const Row& r) { return optional_cell(r.time_ms); }},
      {"time_ms_min", [](const Row& r) { return optional_cell(r.time_ms_min); }},
      {"time_ms_max", [](const Row& r) { return optional_cell(r.time_ms_max); }},
      {"reps", [](const Row& r) { return optional_cell(r.reps); }},
      {"cv", [](const Row& r) { return optional_cell(r.cv); }},
      {"gflops", [](const Row& r) { return optional_cell(r.gflops); }},
      {"workspace_bytes", [](const Row& r) { return optional_cell(r.workspace_bytes); }},
      {"total_bytes", [](const Row& r) { return optional_cell(r.total_bytes); }},
      {"max_abs_err", [](const Row& r) { return optional_cell(r.max_abs_err); }},
      {"max_rel_err", [](const Row& r) { return optional_cell(r.max_rel_err); }},
      {"plan_kernel", [](const Row& r) -> Cell { return r.plan_kernel; }},
      {"plan_transform", [](const Row& r) -> Cell { return r.plan_transform; }},
      {"plan_tile", [](const Row& r) -> Cell { return r.plan_tile; }},
      {"plan_workspace_split", [](const Row& r) -> Cell { return r.plan_workspace_split; }},
      {"plan_details", [](const Row& r) -> Cell { return r.plan_details; }},
      {"knobs", [](const Row& r) -> Cell { return r.knobs; }},
      {"math_mode", [](const Row& r) -> Cell { return r.math_mode; }},
      {"family", [](const Row& r) -> Cell { return r.family; }},
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
