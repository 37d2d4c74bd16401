#include "convlab/text_input.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "convlab/error.hpp"

namespace convlab {

std::string read_text_file(const std::string& path, std::string_view what,
                           const TextLimits& limits) {
  const std::string role(what);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw Error(ErrorCode::io, "cannot read " + role + " '" + path + "': " + std::strerror(errno));
  }
  if (S_ISDIR(info.st_mode)) {
    throw Error(ErrorCode::io, "cannot read " + role + " '" + path + "': it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorCode::io, "cannot read " + role + " '" + path + "': " + std::strerror(errno));
  }
  // In chunks, stopping one byte past the limit: a device such as /dev/zero or a FIFO has no
  // size to check up front, and a regular file may grow while it is read.
  std::string text;
  constexpr std::size_t kChunk = 1 << 16;
  const std::size_t limit = static_cast<std::size_t>(limits.max_bytes);
  while (in && text.size() <= limit) {
    const std::size_t old_size = text.size();
    const std::size_t want = std::min(kChunk, limit + 1 - old_size);
    text.resize(old_size + want);
    in.read(&text[old_size], static_cast<std::streamsize>(want));
    text.resize(old_size + static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(ErrorCode::io, "error while reading " + role + " '" + path + "'");
  if (text.size() > limit) {
    throw Error(ErrorCode::invalid_argument, role + " '" + path + "' is larger than the limit of " +
                                                 std::to_string(limits.max_bytes) + " bytes");
  }
  return text;
}

void check_json_depth(std::string_view text, std::string_view source, int max_depth) {
  int depth = 0;
  int64_t line = 1;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\n') ++line;
    if (in_string) {
      if (ch == '\\') {
        ++i;  // the escaped character cannot close the string
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_depth) {
        throw Error(ErrorCode::invalid_argument, std::string(source) + ":" + std::to_string(line) +
                                                     ": JSON nested deeper than " +
                                                     std::to_string(max_depth) + " arrays/objects");
      }
    } else if (ch == ']' || ch == '}') {
      --depth;  // unbalanced text is the parser's to report
    }
  }
}

std::string excerpt(std::string_view text, std::size_t max_chars) {
  std::string out;
  const std::size_t shown = text.size() > max_chars ? max_chars : text.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch < 0x20 || ch == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", ch);
      out += hex;
    } else {
      out += static_cast<char>(ch);
    }
  }
  if (shown < text.size()) {
    out += "... (" + std::to_string(text.size()) + " characters)";
  }
  return out;
}

std::vector<std::string_view> split_list(std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) {
      items.push_back(text.substr(start));
      return items;
    }
    items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace convlab
