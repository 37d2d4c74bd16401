#include "sweep/suites.hpp"

#include <algorithm>

#include "convlab/error.hpp"

namespace convbench {

long long Suite::convolutions() const {
  long long total = 0;
  for (const auto& layer : layers) total += layer.repeat;
  return total;
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (const auto& suite : embedded_suites()) names.emplace_back(suite.name);
  std::sort(names.begin(), names.end());
  return names;
}

Suite load_suite(const std::string& name) {
  for (const auto& suite : embedded_suites()) {
    if (name == suite.name) {
      // The source named in errors is the file the suite was built from, so a bad line in a
      // suite points at bench/suites/NAME:LINE.
      return {name, convlab::parse_shape_text(suite.text, "bench/suites/" + name)};
    }
  }
  std::string known;
  for (const auto& n : suite_names()) known += (known.empty() ? "" : ", ") + n;
  throw convlab::Error(convlab::ErrorCode::invalid_argument,
                       "unknown suite '" + name + "'; known: " + known + " (or 'all')");
}

}  // namespace convbench
