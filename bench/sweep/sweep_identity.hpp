#pragma once
// The identity of a case and of a sweep, which --resume and merge compare: the case key of a
// row, the sweep keys of the metadata (sweep_cases, sweep_digest, shard, ...), and which
// settings two files of one sweep may differ in.

#include <optional>
#include <string>
#include <vector>

#include "options/cli.hpp"
#include "output/context.hpp"
#include "output/results_file.hpp"
#include "sweep/budgets.hpp"
#include "sweep/cases.hpp"
#include "sweep/shards.hpp"

namespace convbench {

/// suite|layer|descriptor|pass: the rows of one layer and pass, whatever the algorithm.
/// Suite and layer are part of it so that a layer listed twice is two groups.
std::string group_key(const std::string& suite, const std::string& layer,
                      const std::string& descriptor, const std::string& pass);

/// group_key|algorithm|device: one case, and the key of its row in an output file, by which
/// --resume, merge and the sweep digest know it.
std::string case_key(const std::string& suite, const std::string& layer,
                     const std::string& descriptor, const std::string& pass,
                     const std::string& algorithm, const std::string& device);

/// Metadata keys that legitimately differ between runs of one sweep (when, where, how it
/// was started, which part), ignored when --resume and merge compare settings.
bool per_run_key(const std::string& key);

/// The first setting in which `a` and `b` differ, as "KEY: 'x' vs 'y'", or "" when none. The
/// case list (sweep_cases, sweep_digest) is compared after every other setting, so that the
/// message names the setting that changed the cases when there is one.
/// `case_list` false leaves the case list out (merge of whole sweeps of different layers).
std::string settings_difference(const SweepFile& a, const SweepFile& b, bool case_list = true);

/// The key of the first row of `file` (select rows aside) that is no case of `sweep`, or "".
std::string row_outside_sweep(const SweepFile& file, const std::vector<Case>& sweep);

/// Adds the sweep keys to the metadata: always sweep_cases (all cases of the sweep, before
/// --shard and --resume) and sweep_digest (a hash of their identities and knobs: the sweep's
/// identity, which --resume and merge compare with every other setting); the others only
/// when their flag is in use: vary, memory_budget, select, and for a part of a sweep
/// (--shard or a --devices worker) shard, worker and shard_cases (the cases of this part).
void add_sweep_context(Context& context, const RunOptions& options,
                       const std::optional<Budget>& budget, const std::optional<Shard>& shard,
                       const std::optional<Shard>& worker, const std::vector<Case>& sweep,
                       const std::vector<Case>& part);

/// The metadata and header a run with `context` writes, as a SweepFile (to compare with one
/// read back).
SweepFile context_as_file(const Context& context);

}  // namespace convbench
