// The table printer (output/table.hpp).
#include "output/table.hpp"

#include <algorithm>

namespace convbench {

namespace {

// Columns a cell takes on a terminal: UTF-8 continuation bytes (a range's en dash) take none.
size_t display_width(const std::string& cell) {
  size_t width = 0;
  for (unsigned char ch : cell) width += (ch & 0xC0) != 0x80;
  return width;
}

}  // namespace

void print_table(std::ostream& out, const std::vector<std::string>& titles,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(titles.size());
  std::vector<bool> numeric(titles.size(), true);
  for (size_t c = 0; c < titles.size(); ++c) width[c] = display_width(titles[c]);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < titles.size(); ++c) {
      width[c] = std::max(width[c], display_width(row[c]));
      if (!row[c].empty() && row[c].find_first_not_of("0123456789.-+e") != std::string::npos) {
        numeric[c] = false;
      }
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < titles.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(width[c] - std::min(width[c], display_width(cell)), ' ');
      text += (c ? "  " : "") + (numeric[c] ? pad + cell : cell + pad);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(titles);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& row : rows) line(row);
}

}  // namespace convbench
