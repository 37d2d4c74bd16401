#pragma once
// The metadata block of a sweep: what ran where, with what, when. CSV writes it as leading
// `# key: value` lines, JSON as the "context" object (google/benchmark style), the table as a
// short header. Keys are documented in docs/convbench.md.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convlab/algorithm.hpp"

namespace convbench {

/// An ordered object of scalar values (strings and integers), in the order written.
using Context = nlohmann::ordered_json;

/// The settings of the sweep that the context records, so that outputs made with different
/// settings can be told apart (merge refuses to mix them).
struct ContextSettings {
  std::string command_line;
  uint64_t seed = 0;
  int reps = 0;
  int warmup = 0;
  double max_time = 0;
  bool check = false;
  std::string check_scope;  ///< CheckScope::describe() of --check's value
  std::string passes;      ///< as run, comma-separated
  std::string algorithms;  ///< as run, comma-separated
  std::string mb;          ///< the --mb override, or "as listed"
};

/// Collects the context: versions, commit, date, host, CPU, threads, devices and driver of the
/// algorithms in the sweep, math mode, and the settings.
Context collect_context(const ContextSettings& settings,
                        const std::vector<const convlab::Algorithm*>& algorithms);

/// A context value as plain text (strings unquoted), for CSV comments and the table header.
std::string context_text(const nlohmann::ordered_json& value);

/// convbench's version (the library's, from convlab/config.hpp).
const char* convbench_version();

}  // namespace convbench
