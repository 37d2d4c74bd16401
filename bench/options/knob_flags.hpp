#pragma once
// --knob ALGO.KNOB=VALUE: knob values given on the command line, validated
// against each matched algorithm's own schema before anything runs, and attached to the
// cases that pass them to Algorithm::plan().

#include <string>
#include <vector>

#include "sweep/cases.hpp"
#include "convlab/algorithm.hpp"

namespace convbench {

/// One --knob ALGO.KNOB=VALUE. ALGO may be a glob (`cuda.*`); the knob is the part after
/// the last '.' before '='.
struct KnobFlag {
  std::string pattern;
  std::string knob;
  std::string value;
  std::string text;  ///< as given
};

/// Parses one --knob; UsageError naming it when it is not ALGO.KNOB=VALUE.
KnobFlag parse_knob_flag(const std::string& text);

/// Attaches the --knob values to the cases of their algorithms (a later flag wins). Every
/// flag must match an algorithm of the sweep that declares the knob; a flag naming one
/// algorithm exactly must name one of its knobs; every value must be valid for every
/// algorithm it is given to (resolve_knobs). UsageError naming the flag otherwise.
void apply_knob_flags(const std::vector<KnobFlag>& flags,
                      const std::vector<const convlab::Algorithm*>& algorithms,
                      std::vector<Case>& cases);

/// --device N: sets the `device` knob of every case whose algorithm declares one (the others
/// are left alone, so a sweep that mixes CPU and GPU algorithms takes it). A case whose
/// `device` knob --knob already set to another value is a UsageError naming both; so is a
/// value the knob's schema refuses.
void apply_device_setting(const std::string& device, std::vector<Case>& cases);

}  // namespace convbench
