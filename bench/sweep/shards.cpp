// --shard I/N and the Slurm array variables (sweep/shards.hpp).
#include "sweep/shards.hpp"

#include <algorithm>

#include "convlab/knobs.hpp"
#include "options/cli.hpp"

namespace convbench {

Shard parse_shard(const std::string& text, const std::string& flag) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    throw UsageError(flag + " '" + text + "': expected I/N, e.g. 2/8 (part 2 of 8)");
  }
  Shard s;
  s.index = parse_count(text.substr(0, slash), flag + " '" + text + "' index");
  s.count = parse_count(text.substr(slash + 1), flag + " '" + text + "' count");
  if (s.count < 1 || s.index < 1 || s.index > s.count) {
    throw UsageError(flag + " '" + text + "': need 1 <= I <= N");
  }
  return s;
}

std::optional<Shard> resolve_shard(const std::optional<std::string>& flag) {
  if (flag) {
    Shard s = parse_shard(*flag, "--shard");
    s.source = "--shard " + s.text();
    return s;
  }
  const auto id = convlab::environment_placement("SLURM_ARRAY_TASK_ID");
  const auto count = convlab::environment_placement("SLURM_ARRAY_TASK_COUNT");
  if (!id || !count) return std::nullopt;
  std::string source;
  auto env = [&source](const char* name, const char* fallback) {
    const auto v = convlab::environment_placement(name);
    if (v) source += (source.empty() ? "" : " ") + std::string(name) + "=" + *v;
    return parse_count(v.value_or(fallback), std::string("environment variable ") + name);
  };
  const int64_t task = env("SLURM_ARRAY_TASK_ID", "0");
  const int64_t n = env("SLURM_ARRAY_TASK_COUNT", "0");
  const int64_t min = env("SLURM_ARRAY_TASK_MIN", "0");
  const int64_t step = std::max<int64_t>(env("SLURM_ARRAY_TASK_STEP", "1"), 1);
  const int64_t index = (task - min) / step + 1;
  if (n < 1 || task < min || (task - min) % step != 0 || index > n) {
    throw UsageError("cannot take a shard from SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                     ", SLURM_ARRAY_TASK_COUNT=" + std::to_string(n) + ", MIN=" +
                     std::to_string(min) + ", STEP=" + std::to_string(step) + ": give --shard I/N");
  }
  return Shard{index, n, source};
}

std::vector<Case> take_part(const std::vector<Case>& cases, const Shard& part) {
  std::vector<Case> out;
  int64_t group = -1;
  const Case* previous = nullptr;
  for (const Case& c : cases) {
    if (!previous || c.layer_index != previous->layer_index || c.pass != previous->pass) ++group;
    previous = &c;
    if (group % part.count + 1 == part.index) out.push_back(c);
  }
  return out;
}

}  // namespace convbench
