#pragma once
// --devices 0,1,...: one worker process per device, and the merging of sweep files that it
// shares with `convbench merge`.
//
// Each worker is a process (the devices run at once): convbench starts itself once per device
// with `--device D` (the `device` knob of every GPU algorithm, recorded in each row's knobs;
// nothing is passed through the environment), `--worker d/D` (the d-th of D parts of the
// cases, by whole layer and pass groups, like --shard) and `--out OUT.workerD.csv`, waits for
// them, and writes their rows to --out and stdout as one sweep.

#include <iosfwd>
#include <string>
#include <vector>

#include "options/cli.hpp"
#include "output/reporters.hpp"
#include "output/results_file.hpp"

namespace convbench {

/// A worker's arguments (without the program name): the user's `argv` (argv[0] first) less
/// --devices, --device, --out and --format (each "--flag value" or "--flag=value"), plus
/// `--out part --format csv --worker worker --device device`.
std::vector<std::string> worker_arguments(const std::vector<std::string>& argv,
                                          const std::string& part, const std::string& worker,
                                          const std::string& device);

/// `convbench run --devices ...`; returns the exit status.
int run_with_workers(const RunOptions& options);

/// Writes the rows of `files` (in order, skipping the rows whose index is in `skip`, one set
/// per file) as one sweep in `format`, with the metadata of the first file minus the keys in
/// `drop` plus `extra`. Returns the rows' summary.
Summary write_sweep(std::ostream& out, Format format, const std::vector<SweepFile>& files,
                    const std::vector<std::vector<bool>>& skip,
                    const std::vector<std::string>& drop,
                    const std::vector<std::pair<std::string, std::string>>& extra);

}  // namespace convbench
