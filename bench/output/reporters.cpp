// The CSV and JSON reporters (the table lives in table_reporter.cpp).
#include "output/reporters.hpp"

#include <ostream>

#include "convlab/error.hpp"

namespace convbench {

const char* to_string(Format format) noexcept { return convlab::name_of(kFormatNames, format); }

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

namespace {

// A stream that failed (disk full, closed pipe) must stop the sweep rather than lose rows
// silently.
void check_stream(std::ostream& out) {
  if (!out) throw convlab::Error(convlab::ErrorCode::io, "writing the output failed");
}

// Comments and metadata values stay on one line whatever they hold.
std::string one_line(std::string text) {
  for (char& ch : text) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  return text;
}

class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(std::ostream& out, bool header = true) : out_(out), header_(header) {}

  void begin(const Context& context, const std::vector<Case>&) override {
    if (!header_) return;
    for (const auto& [key, value] : context.items()) {
      out_ << "# " << key << ": " << one_line(context_text(value)) << "\n";
    }
    const auto& columns = row_columns();
    for (size_t i = 0; i < columns.size(); ++i) out_ << (i ? "," : "") << columns[i].name;
    out_ << "\n";
    out_.flush();
    check_stream(out_);
  }

  void add(const Row& row) override {
    const auto& columns = row_columns();
    for (size_t i = 0; i < columns.size(); ++i) {
      if (i) out_ << ",";
      const Cell cell = columns[i].get(row);
      if (const auto* s = std::get_if<std::string>(&cell)) out_ << csv_field(one_line(*s));
      if (const auto* n = std::get_if<int64_t>(&cell)) out_ << *n;
      if (const auto* d = std::get_if<double>(&cell)) out_ << format_real(*d);
    }
    out_ << "\n";
    out_.flush();
    check_stream(out_);
  }

  void end(const Summary&) override {
    out_.flush();
    check_stream(out_);
  }

 private:
  std::ostream& out_;
  bool header_;
};

nlohmann::ordered_json row_json(const Row& row) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const Column& column : row_columns()) {
    const Cell cell = column.get(row);
    auto& slot = object[column.name];
    if (const auto* s = std::get_if<std::string>(&cell)) slot = *s;
    if (const auto* n = std::get_if<int64_t>(&cell)) slot = *n;
    if (const auto* d = std::get_if<double>(&cell)) slot = *d;  // NaN/Inf become null
  }
  return object;
}

// {"context": {...}, "rows": [...], "summary": {...}}, written incrementally: one row per
// line, so the rows of an interrupted sweep can still be read line by line.
class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(std::ostream& out) : out_(out) {}

  void begin(const Context& context, const std::vector<Case>&) override {
    std::string text = context.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string indented;
    for (char ch : text) {
      indented += ch;
      if (ch == '\n') indented += "  ";
    }
    out_ << "{\n  \"context\": " << indented << ",\n  \"rows\": [";
    out_.flush();
    check_stream(out_);
  }

  void add(const Row& row) override {
    out_ << (rows_++ ? ",\n    " : "\n    ")
         << row_json(row).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out_.flush();
    check_stream(out_);
  }

  void end(const Summary& summary) override {
    nlohmann::ordered_json s = {{"cases", summary.total()},
                                {"ok", summary.ok},
                                {"unsupported", summary.unsupported},
                                {"over_budget", summary.over_budget},
                                {"error", summary.error}};
    out_ << (rows_ ? "\n  ],\n" : "],\n") << "  \"summary\": " << s.dump() << "\n}\n";
    out_.flush();
    check_stream(out_);
  }

 private:
  std::ostream& out_;
  size_t rows_ = 0;
};

}  // namespace

std::unique_ptr<Reporter> make_csv_rows_reporter(std::ostream& out) {
  return std::make_unique<CsvReporter>(out, false);
}

std::unique_ptr<Reporter> make_reporter(Format format, std::ostream& out, bool check) {
  switch (format) {
    case Format::table: return make_table_reporter(out, check);
    case Format::csv: return std::make_unique<CsvReporter>(out);
    case Format::json: return std::make_unique<JsonReporter>(out);
  }
  return nullptr;
}

void ReporterGroup::begin(const Context& context, const std::vector<Case>& cases) {
  for (auto& r : reporters_) r->begin(context, cases);
}
void ReporterGroup::case_started(const Case& c) {
  for (auto& r : reporters_) r->case_started(c);
}
void ReporterGroup::add(const Row& row) {
  for (auto& r : reporters_) r->add(row);
}
void ReporterGroup::end(const Summary& summary) {
  for (auto& r : reporters_) r->end(summary);
}

}  // namespace convbench
