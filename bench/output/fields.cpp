// The report rows (output/fields.hpp).
#include "output/fields.hpp"

#include "output/reporters.hpp"

namespace convbench {

void write_fields_csv(std::ostream& out, const Context& context,
                      const std::vector<FieldColumn>& columns, const std::vector<Fields>& rows) {
  for (const auto& [key, value] : context.items())
    out << "# " << key << ": " << context_text(value) << "\n";
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i].name;
  out << "\n";
  for (const Fields& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = row.find(columns[i].name);
      out << (i ? "," : "") << (it == row.end() ? "" : csv_field(it->second));
    }
    out << "\n";
  }
}

std::vector<FieldColumn> columns_of(const std::vector<FieldColumns>& runs) {
  std::vector<FieldColumn> columns;
  for (const FieldColumns& run : runs) {
    for (const std::string& name : run.names) columns.push_back({name, run.type});
  }
  return columns;
}

std::vector<FieldColumn> case_columns(const std::vector<FieldColumns>& more) {
  std::vector<FieldColumns> runs = {
      {FieldType::text, {"kind", "suite", "layer", "descriptor", "pass", "algorithm"}}};
  runs.insert(runs.end(), more.begin(), more.end());
  return columns_of(runs);
}

nlohmann::ordered_json fields_json(const Fields& row, const std::vector<FieldColumn>& columns,
                                   AbsentField absent, EmptyText empty) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const FieldColumn& column : columns) {
    auto it = row.find(column.name);
    if (it == row.end()) {
      if (absent == AbsentField::null) object[column.name] = nullptr;
    } else if (it->second.empty() && (empty == EmptyText::null || column.type != FieldType::text)) {
      object[column.name] = nullptr;
    } else if (column.type == FieldType::integer) {
      object[column.name] = std::stoll(it->second);
    } else if (column.type == FieldType::real) {
      object[column.name] = std::stod(it->second);
    } else {
      object[column.name] = it->second;
    }
  }
  return object;
}

void write_fields_json(std::ostream& out, const Context& context,
                       const std::vector<FieldColumn>& columns, const std::vector<Fields>& rows,
                       AbsentField absent, EmptyText empty,
                       const std::vector<std::pair<std::string, std::string>>& sections) {
  nlohmann::ordered_json doc = {{"context", context}};
  for (const auto& section : sections) doc[section.second] = nlohmann::json::array();
  for (const Fields& row : rows) {
    nlohmann::ordered_json object = fields_json(row, columns, absent, empty);
    object.erase("kind");
    for (const auto& [kind, section] : sections) {
      if (row.at("kind") == kind) doc[section].push_back(std::move(object));
    }
  }
  out << doc.dump(2) << "\n";
}

}  // namespace convbench
