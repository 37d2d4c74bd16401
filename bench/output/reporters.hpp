#pragma once
// Reporters turn rows into output as each case finishes: `add` writes the row and flushes, so
// an interrupted sweep keeps every finished row. One interface for the three formats (and for
// the sweep controls: a progress line, a --resume-aware file sink).

#include <array>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "sweep/cases.hpp"
#include "output/context.hpp"
#include "convlab/enum_names.hpp"
#include "output/row.hpp"

namespace convbench {

enum class Format { table, csv, json };
inline constexpr auto kFormatNames = convlab::enum_names<Format::json>({
    {Format::table, "table"},
    {Format::csv, "csv"},
    {Format::json, "json"},
});
const char* to_string(Format format) noexcept;

class Reporter {
 public:
  virtual ~Reporter() = default;
  /// Before the first case: the metadata and the whole case list (the table sizes its columns
  /// from it).
  virtual void begin(const Context& context, const std::vector<Case>& cases) = 0;
  /// A case is about to run (a progress line hooks in here).
  virtual void case_started(const Case&) {}
  /// A case finished: write its row and flush.
  virtual void add(const Row& row) = 0;
  /// After the last case.
  virtual void end(const Summary& summary) = 0;
};

/// A reporter writing `format` to `out` (which must outlive it). `check` tells the table to
/// show the error columns.
std::unique_ptr<Reporter> make_reporter(Format format, std::ostream& out, bool check);
std::unique_ptr<Reporter> make_table_reporter(std::ostream& out, bool check);
/// A CSV reporter that writes no metadata or header: for --resume, which appends rows to a
/// file that already has them.
std::unique_ptr<Reporter> make_csv_rows_reporter(std::ostream& out);

/// Forwards every call to each of its reporters, in order.
class ReporterGroup final : public Reporter {
 public:
  void push_back(std::unique_ptr<Reporter> reporter) { reporters_.push_back(std::move(reporter)); }
  void begin(const Context& context, const std::vector<Case>& cases) override;
  void case_started(const Case& c) override;
  void add(const Row& row) override;
  void end(const Summary& summary) override;

 private:
  std::vector<std::unique_ptr<Reporter>> reporters_;
};

/// A CSV field, quoted per RFC 4180 when it holds a comma, quote or line break.
std::string csv_field(const std::string& text);

}  // namespace convbench
