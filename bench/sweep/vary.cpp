// --vary (sweep/vary.hpp).
#include "sweep/vary.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "options/cli.hpp"

namespace convbench {

VaryAxis parse_vary(const std::string& text) {
  static const char* const kFields[] = {"mb", "g",  "ic", "ih", "iw", "oc", "oh", "ow",
                                        "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};
  const std::string where = "--vary '" + text + "'";
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw UsageError(where + ": expected FIELD=START:STOP[:STEP]");
  VaryAxis axis;
  axis.text = text;
  axis.field = text.substr(0, eq);
  if (std::find(std::begin(kFields), std::end(kFields), axis.field) == std::end(kFields)) {
    throw UsageError(where + ": unknown field '" + axis.field +
                     "'; known: mb g ic ih iw oc oh ow kh kw sh sw ph pw dh dw");
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

namespace {

// A descriptor as its (key, digits) entries and its name, in order, for substitution.
struct DescriptorParts {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string name;
};

DescriptorParts split_descriptor(const std::string& text) {
  DescriptorParts d;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '_') {
      ++i;
    } else if (text[i] == 'n' && i + 1 < text.size() && text[i + 1] == '"') {
      const size_t close = text.find('"', i + 2);
      d.name = text.substr(i + 2, close == std::string::npos ? std::string::npos : close - i - 2);
      i = close == std::string::npos ? text.size() : close + 1;
    } else {
      size_t k = i;
      while (k < text.size() && std::islower(static_cast<unsigned char>(text[k]))) ++k;
      size_t v = k;
      while (v < text.size() && std::isdigit(static_cast<unsigned char>(text[v]))) ++v;
      d.entries.emplace_back(text.substr(i, k - i), text.substr(k, v - k));
      i = std::max(v, i + 1);
    }
  }
  return d;
}

}  // namespace

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
    const DescriptorParts parts = split_descriptor(base);
    std::vector<size_t> at(axes.size(), 0);
    while (true) {
      DescriptorParts d = parts;
      std::string label;
      for (size_t a = 0; a < axes.size(); ++a) {
        const std::string value = std::to_string(axes[a].values[at[a]]);
        auto it = std::find_if(d.entries.begin(), d.entries.end(),
                               [&](const auto& e) { return e.first == axes[a].field; });
        if (it != d.entries.end()) {
          it->second = value;
        } else {
          d.entries.emplace_back(axes[a].field, value);
        }
        label += (label.empty() ? "" : " ") + axes[a].field + "=" + value;
      }
      std::string text;
      for (const auto& [key, value] : d.entries) text += key + value;
      const std::string name = parsed.name.empty() ? label : parsed.name + " " + label;
      text += "n\"" + name + "\"";
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
