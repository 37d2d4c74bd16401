// The table for people: aligned columns, streamed row by row. Column widths come from the
// case list (names are known before anything runs) and fixed widths for the numbers, so each
// row can be printed the moment its case finishes.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>

#include "output/reporters.hpp"

namespace convbench {
namespace {

struct TableColumn {
  std::string title;
  size_t width;
  bool right;  // numbers align right
  std::string (*cell)(const Row&);
};

std::string real_or_blank(const std::optional<double>& v) { return v ? format_real(*v) : ""; }

std::string fixed(const std::optional<double>& v, int decimals) {
  if (!v) return "";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, *v);
  return buffer;
}

std::string mebibytes(const std::optional<int64_t>& bytes) {
  if (!bytes) return "";
  return fixed(static_cast<double>(*bytes) / (1024.0 * 1024.0), 2);
}

std::string layer_label(const Row& r) { return r.layer.empty() ? r.descriptor : r.layer; }

class TableReporter final : public Reporter {
 public:
  TableReporter(std::ostream& out, bool check) : out_(out), check_(check) {}

  void begin(const Context& context, const std::vector<Case>& cases) override {
    out_ << "convbench " << context_text(context["convbench_version"]) << "  commit "
         << context_text(context["git_commit"]) << "  " << context_text(context["date"]) << "\n";
    out_ << "devices: " << context_text(context["devices"]) << "  ("
         << context_text(context["math_mode"]) << ", seed " << context_text(context["seed"])
         << ", up to " << context_text(context["reps"]) << " reps or "
         << context_text(context["max_time_s"]) << " s per case after "
         << context_text(context["warmup"]) << " warm-up"
         // A sweep file from before --interleave existed has no such key.
         << (context.contains("interleave") && context_text(context["interleave"]) == "on"
                 ? ", algorithms interleaved"
                 : "")
         << ")\n\n";

    size_t suite_w = 5, layer_w = 5, algo_w = 9;
    std::set<std::string> suites;
    for (const Case& c : cases) {
      suites.insert(c.suite);
      suite_w = std::max(suite_w, c.suite.size());
      layer_w = std::max(layer_w, c.layer.name.empty() ? c.layer.problem.descriptor().size()
                                                       : c.layer.name.size());
      algo_w = std::max(algo_w, c.algorithm->name().size());
    }
    if (suites.size() > 1) {
      columns_.push_back({"suite", suite_w, false, [](const Row& r) { return r.suite; }});
    }
    columns_.push_back({"layer", layer_w, false, layer_label});
    columns_.push_back({"pass", 10, false, [](const Row& r) { return r.pass; }});
    columns_.push_back({"algorithm", algo_w, false, [](const Row& r) { return r.algorithm; }});
    columns_.push_back(
        {"status", 11, false, [](const Row& r) { return std::string(to_string(r.status)); }});
    columns_.push_back({"plan_ms", 9, true, [](const Row& r) { return fixed(r.plan_ms, 2); }});
    columns_.push_back({"time_ms", 10, true, [](const Row& r) { return fixed(r.time_ms, 3); }});
    columns_.push_back({"min_ms", 10, true, [](const Row& r) { return fixed(r.time_ms_min, 3); }});
    columns_.push_back({"max_ms", 10, true, [](const Row& r) { return fixed(r.time_ms_max, 3); }});
    columns_.push_back({"GFLOP/s", 8, true, [](const Row& r) { return fixed(r.gflops, 2); }});
    columns_.push_back(
        {"ws_MiB", 9, true, [](const Row& r) { return mebibytes(r.workspace_bytes); }});
    if (check_) {
      columns_.push_back(
          {"abs_err", 11, true, [](const Row& r) { return real_or_blank(r.max_abs_err); }});
      columns_.push_back(
          {"rel_err", 11, true, [](const Row& r) { return real_or_blank(r.max_rel_err); }});
    }
    std::string header, rule;
    for (const auto& column : columns_) {
      header += pad(column.title, column.width, column.right) + "  ";
      rule += std::string(column.width, '-') + "  ";
    }
    out_ << header << "reason\n" << rule << "------\n";
    out_.flush();
  }

  void add(const Row& row) override {
    std::string line;
    for (const auto& column : columns_)
      line += pad(column.cell(row), column.width, column.right) + "  ";
    line += row.reason;
    out_ << line << "\n";
    out_.flush();
  }

  void end(const Summary&) override { out_.flush(); }

 private:
  static std::string pad(const std::string& text, size_t width, bool right) {
    if (text.size() >= width) return text;
    const std::string fill(width - text.size(), ' ');
    return right ? fill + text : text + fill;
  }

  std::ostream& out_;
  bool check_;
  std::vector<TableColumn> columns_;
};

}  // namespace

std::unique_ptr<Reporter> make_table_reporter(std::ostream& out, bool check) {
  return std::make_unique<TableReporter>(out, check);
}

}  // namespace convbench
