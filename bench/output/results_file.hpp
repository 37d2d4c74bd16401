#pragma once
// A convbench CSV read back, as written (for --resume, merge and compare).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "output/row.hpp"

namespace convbench {

/// A convbench CSV read back (for --resume and merge).
struct SweepFile {
  std::string path;
  std::vector<std::pair<std::string, std::string>> meta;  ///< the "# key: value" lines
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  ///< complete rows only
  std::size_t complete_bytes = 0;              ///< up to the end of the last complete row
  std::size_t torn_bytes = 0;  ///< after it: a row cut short by a kill (0 when none)
  /// The value of a metadata key, or nullptr.
  const std::string* meta_value(const std::string& key) const;
  /// The column of that name, or -1.
  int column(const std::string& name) const;
  /// case_key of row i.
  std::string key(std::size_t row) const;
};

/// Row i of a file as a Row (by column name; unknown columns ignored, bad numbers absent).
Row row_from_file(const SweepFile& file, std::size_t i);

/// Reads a convbench CSV. A last row without its line break, or with the wrong number of
/// fields, is torn (counted in torn_bytes); any other malformed row is an Error{io} naming
/// the file and line. Error{io} when the file cannot be read or has no header.
SweepFile read_sweep_file(const std::string& path);

}  // namespace convbench
