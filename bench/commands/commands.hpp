#pragma once
// The subcommands, one function each: each takes its options (options/cli.hpp) and the
// command line (recorded in the output's metadata), returns the exit status, and throws
// UsageError for bad input before any output file is opened.

#include <string>

#include "options/cli.hpp"

namespace convbench {

/// `convbench list`.
int run_list(const ListOptions& options);
/// `convbench run`: 0 when all rows are ok or unsupported, 1 when any row is an error.
int run_sweep(const RunOptions& options, const std::string& command_line);
/// `convbench memory`, `predict`, `merge`, `compare`.
int run_memory(const MemoryOptions& options, const std::string& command_line);
int run_predict(const PredictOptions& options, const std::string& command_line);
int run_merge(const MergeOptions& options, const std::string& command_line);
int run_compare(const CompareOptions& options, const std::string& command_line);

}  // namespace convbench
