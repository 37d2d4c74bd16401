#pragma once
// The metadata block of a sweep: what ran where, with what, when. CSV writes it as leading
// `# key: value` lines, JSON as the "context" object (google/benchmark style), the table as a
// short header. Keys are documented in docs/convbench.md.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convlab/algorithm.hpp"
#include "options/cli.hpp"

namespace convbench {

/// An ordered object of scalar values (strings and integers), in the order written.
using Context = nlohmann::ordered_json;

/// The machine and the build: versions, commit, date, host, CPU, threads, the devices and
/// driver of the available `algorithms` (those the output is about), libraries, compiler, build
/// type, math mode.
Context collect_context(const std::vector<const convlab::Algorithm*>& algorithms);

/// The layer selection as run: mb (the --mb override, the default sweep's, or "as listed"),
/// passes and algorithms. Recorded so that outputs made with different settings can be told
/// apart (merge and --resume refuse to mix them).
void add_layer_context(Context& context, const LayerOptions& layers,
                       const std::vector<const convlab::Algorithm*>& algorithms);

/// The settings of `convbench run`: seed, reps, warmup, max_time_s, check (with
/// `check_scope`, CheckScope::describe() of --check's value), then the layer selection.
void add_run_context(Context& context, const RunOptions& options, const std::string& check_scope,
                     const std::vector<const convlab::Algorithm*>& algorithms);

/// A context value as plain text (strings unquoted), for CSV comments and the table header.
std::string context_text(const nlohmann::ordered_json& value);

/// The driver version in the first line of /proc/driver/nvidia/version (either kernel
/// module's wording); the whole line when it names none.
std::string nvidia_driver_version(const std::string& line);

/// The `NAME=value` entries of `variables` (an environment) that the libraries under the
/// algorithms read and that can change a time or a result (OpenMP, OpenBLAS, oneDNN, glibc's
/// tunables, the CUDA libraries'), sorted and `; `-separated; "none" when there are none.
std::string library_environment(const std::vector<std::string>& variables);

/// convbench's version (the library's, from convlab/config.hpp).
const char* convbench_version();

}  // namespace convbench
