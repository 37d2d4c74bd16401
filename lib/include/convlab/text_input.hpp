#pragma once
/// \file
/// Bounded reading of the text files the library is given (shape files, cards files, sweep
/// CSVs): a size limit enforced while reading, so /dev/zero or a huge file costs at most the
/// limit; a nesting limit checked on JSON text before any parser sees it; and message
/// excerpts of bounded length.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace convlab {

/// The limits on one input file. The defaults are far above any real shape, cards or sweep
/// file (the largest shipped shape file is a few kB; a sweep CSV holds a row per case).
struct TextLimits {
  int64_t max_bytes = int64_t{64} << 20;  ///< whole file
  int64_t max_line_bytes = 64 << 10;      ///< one line (checked by the line readers)
  int max_json_depth = 64;                ///< nested arrays/objects (JSON files only)
};

/// Reads `path` whole, at most `limits.max_bytes` bytes: Error{io} for a missing, unreadable
/// or directory path or a read error; Error{invalid_argument} naming the file and the limit
/// when it holds more. `what` names the file's role in messages ("shape file", ...).
std::string read_text_file(const std::string& path, std::string_view what,
                           const TextLimits& limits = {});

/// Throws Error{invalid_argument} naming `source` and the line when the JSON text nests
/// arrays and objects deeper than `max_depth` (brackets inside strings do not count). Run it
/// before parsing: a recursive parser or printer cannot then run out of stack.
void check_json_depth(std::string_view text, std::string_view source, int max_depth);

/// At most `max_chars` characters of `text` for a message, with "..." and the full length
/// when cut; control characters are written as \xNN so the message stays one line.
std::string excerpt(std::string_view text, std::size_t max_chars = 80);

/// The items of a comma-separated list, in order and untrimmed, empty ones included ("" is
/// one empty item, "a," two), so that each caller rejects an empty item in its own words.
/// The views point into `text`.
std::vector<std::string_view> split_list(std::string_view text);

}  // namespace convlab
