// --vary (sweep/vary.hpp).
#include "sweep/vary.hpp"

#include <algorithm>
#include <sstream>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "options/cli.hpp"

namespace convbench {

VaryAxis parse_vary(const std::string& text) {
  const std::string where = "--vary '" + text + "'";
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw UsageError(where + ": expected FIELD=START:STOP[:STEP]");
  VaryAxis axis;
  axis.text = text;
  axis.field = text.substr(0, eq);
  const std::vector<std::string>& keys = convlab::descriptor_keys();
  if (std::find(keys.begin(), keys.end(), axis.field) == keys.end()) {
    std::string known;
    for (const std::string& k : keys) known += (known.empty() ? "" : " ") + k;
    throw UsageError(where + ": unknown field '" + axis.field + "'; known: " + known);
  }
  std::vector<std::string> parts;
  std::stringstream range(text.substr(eq + 1));
  for (std::string part; std::getline(range, part, ':');) parts.push_back(part);
  if (parts.size() < 2 || parts.size() > 3) {
    throw UsageError(where + ": expected START:STOP or START:STOP:STEP");
  }
  const int64_t start = parse_count(parts[0], where + " start");
  const int64_t stop = parse_count(parts[1], where + " stop");
  bool multiply = false;
  int64_t step = 1;
  if (parts.size() == 3) {
    multiply = !parts[2].empty() && parts[2][0] == '*';
    std::string s = parts[2].substr(multiply || (!parts[2].empty() && parts[2][0] == '+'));
    step = parse_count(s, where + " step");
  }
  if (stop < start) throw UsageError(where + ": stop is below start");
  if (multiply ? (step < 2 || start < 1) : step < 1) {
    throw UsageError(
        where + (multiply ? ": a *STEP needs STEP >= 2 and START >= 1" : ": STEP must be >= 1"));
  }
  for (int64_t v = start; v <= stop; v = multiply ? v * step : v + step) {
    axis.values.push_back(v);
    if (axis.values.size() > 10000) throw UsageError(where + ": more than 10000 values");
  }
  return axis;
}

void check_vary_size(std::size_t bases, const std::vector<VaryAxis>& axes, int64_t max_cases) {
  // Multiplied with a stop past the cap, so that no product overflows.
  uint64_t combinations = bases;
  std::string factors = std::to_string(bases) + " shapes";
  for (const VaryAxis& a : axes) {
    factors += " x " + std::to_string(a.values.size()) + " " + a.field;
    combinations = combinations > static_cast<uint64_t>(max_cases) ? combinations
                                                                   : combinations * a.values.size();
  }
  if (combinations > static_cast<uint64_t>(max_cases)) {
    throw UsageError("--vary: " + factors + " is more than --max-cases " +
                     std::to_string(max_cases) + " combinations; narrow the ranges or give a " +
                     "larger --max-cases");
  }
}

std::vector<std::string> expand_vary(const std::vector<std::string>& bases,
                                     const std::vector<VaryAxis>& axes,
                                     std::vector<std::string>& skipped) {
  std::vector<std::string> out;
  for (const std::string& base : bases) {
    const convlab::Layer parsed = convlab::parse_descriptor(base);  // a bad base is bad input
    std::vector<size_t> at(axes.size(), 0);
    while (true) {
      std::vector<std::pair<std::string, int64_t>> values;
      std::string label;
      for (size_t a = 0; a < axes.size(); ++a) {
        values.emplace_back(axes[a].field, axes[a].values[at[a]]);
        label += (label.empty() ? "" : " ") + axes[a].field + "=" +
                 std::to_string(axes[a].values[at[a]]);
      }
      const std::string text = convlab::edit_descriptor(
          base, values, parsed.name.empty() ? label : parsed.name + " " + label);
      try {
        (void)convlab::parse_descriptor(text);
        out.push_back(text);
      } catch (const convlab::Error& e) {
        skipped.push_back(label + ": " + e.what());
      }
      size_t a = 0;
      while (a < axes.size() && ++at[a] == axes[a].values.size()) at[a++] = 0;
      if (a == axes.size()) break;
    }
  }
  return out;
}

}  // namespace convbench
