#include "options/knob_flags.hpp"

#include <algorithm>
#include <map>

#include "options/cli.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"

namespace convbench {

namespace {

bool declares(const convlab::Algorithm& algorithm, const std::string& knob) {
  const auto& knobs = algorithm.info().knobs;
  return std::any_of(knobs.begin(), knobs.end(),
                     [&](const convlab::KnobSpec& k) { return k.name == knob; });
}

std::string knob_names(const convlab::Algorithm& algorithm) {
  std::string names;
  for (const convlab::KnobSpec& k : algorithm.info().knobs)
    names += (names.empty() ? "" : ", ") + k.name;
  return names.empty() ? "none" : names;
}

// Resolving is the validation: it throws for an unknown knob or a bad value.
void validate(const convlab::Algorithm& algorithm, const convlab::KnobValues& given,
              const std::string& flag) {
  try {
    (void)convlab::resolve_knobs(algorithm.name(), algorithm.info().knobs, given);
  } catch (const convlab::Error& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

}  // namespace

KnobFlag parse_knob_flag(const std::string& text) {
  const size_t eq = text.find('=');
  const size_t dot = eq == std::string::npos ? std::string::npos : text.rfind('.', eq);
  if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 == eq) {
    throw UsageError("--knob '" + text +
                     "': expected ALGO.KNOB=VALUE, e.g. cpu.fft.planner=estimate");
  }
  return {text.substr(0, dot), text.substr(dot + 1, eq - dot - 1), text.substr(eq + 1), text};
}

void apply_knob_flags(const std::vector<KnobFlag>& flags,
                      const std::vector<const convlab::Algorithm*>& algorithms,
                      std::vector<Case>& cases) {
  std::map<const convlab::Algorithm*, convlab::KnobValues> given;
  for (const KnobFlag& flag : flags) {
    const std::string where = "--knob '" + flag.text + "'";
    const bool exact = flag.pattern.find_first_of("*?") == std::string::npos;
    std::vector<const convlab::Algorithm*> matched;
    for (const convlab::Algorithm* a : algorithms) {
      if (convlab::glob_match(flag.pattern, a->name())) matched.push_back(a);
    }
    if (matched.empty()) {
      std::string names;
      for (const convlab::Algorithm* a : algorithms) names += (names.empty() ? "" : ", ") + a->name();
      throw UsageError(where + ": '" + flag.pattern +
                       "' matches no algorithm of this sweep (" + names + ")");
    }
    bool used = false;
    for (const convlab::Algorithm* a : matched) {
      if (!declares(*a, flag.knob)) {
        if (exact) {
          throw UsageError(where + ": " + a->name() + " has no knob '" + flag.knob +
                           "' (its knobs: " + knob_names(*a) + ")");
        }
        continue;  // a glob sets the knob where it exists
      }
      given[a][flag.knob] = flag.value;
      validate(*a, given[a], where);
      used = true;
    }
    if (!used) {
      throw UsageError(where + ": no algorithm matching '" + flag.pattern + "' has a knob '" +
                       flag.knob + "' (" + matched.front()->name() + "'s knobs: " +
                       knob_names(*matched.front()) + ")");
    }
  }
  for (Case& c : cases) {
    auto it = given.find(c.algorithm);
    if (it == given.end()) continue;
    for (const auto& [knob, value] : it->second) c.knobs[knob] = value;
  }
}

void apply_device_setting(const std::string& device, std::vector<Case>& cases) {
  const std::string where = "--device '" + device + "'";
  if (device.empty() || device.size() > 7 ||
      device.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(where + ": expected a device number 0, 1, ...");
  }
  for (Case& c : cases) {
    if (!declares(*c.algorithm, "device")) continue;
    const auto given = c.knobs.find("device");
    if (given != c.knobs.end() && given->second != device) {
      throw UsageError(where + ": --knob gives " + c.algorithm->name() + " device " +
                       given->second);
    }
    c.knobs["device"] = device;
    validate(*c.algorithm, c.knobs, where);
  }
}

}  // namespace convbench
