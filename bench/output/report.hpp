#pragma once
// Where the report commands (memory, predict, compare) write: stdout in --format, and a copy
// in --out, so that every report treats the two the same way.

#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace convbench {

/// Writes the report in one format ("table", "csv" or "json") to a stream.
using ReportWriter = std::function<void(std::ostream& out, const std::string& format)>;

/// `write` on stdout in `format` (table when not given); then, with `out`, into that file
/// (JSON for a .json name, CSV otherwise) through OutputFile, so that the file is whole or
/// absent. `flag` names --out in messages ("--out", "compare: --out").
void write_report(const std::optional<std::string>& format, const std::optional<std::string>& out,
                  const std::string& flag, const ReportWriter& write);

}  // namespace convbench
