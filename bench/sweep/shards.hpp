#pragma once
// --shard and the Slurm array variables: which part of the sweep this process runs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/cases.hpp"

namespace convbench {

/// A 1-based part I of N.
struct Shard {
  int64_t index = 1;
  int64_t count = 1;
  std::string source;  ///< where it came from: "--shard 2/8" or the Slurm variables read
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

/// Parses "I/N" with 1 <= I <= N; UsageError naming `flag` otherwise.
Shard parse_shard(const std::string& text, const std::string& flag);

/// --shard when given, else SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (with
/// SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP when set: task ids MIN, MIN+STEP, ... are
/// shards 1, 2, ...), else none. A malformed variable is a UsageError naming it. The shard's
/// source says which of them decided it (the metadata's shard_source).
std::optional<Shard> resolve_shard(const std::optional<std::string>& flag);

/// The cases of the (layer, pass) groups that fall to `part`: group g (in sweep order) goes
/// to part g mod N + 1. Whole groups stay together, so --select sees every algorithm of a
/// layer and pass, and every case lands in exactly one part.
std::vector<Case> take_part(const std::vector<Case>& cases, const Shard& part);

}  // namespace convbench
