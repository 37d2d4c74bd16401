// The one place the library reads the environment. Variables only ever supply documented
// defaults of knobs, or say where a process runs within a larger job (Slurm's array index);
// each default read is remembered so that the metadata of a run records it.
#include <cstdlib>
#include <mutex>

#include "convlab/knobs.hpp"

namespace convlab {
namespace {

std::mutex& used_mutex() {
  static std::mutex m;
  return m;
}

std::vector<std::pair<std::string, std::string>>& used() {
  static std::vector<std::pair<std::string, std::string>> list;
  return list;
}

}  // namespace

std::optional<std::string> environment_default(const std::string& variable) {
  const char* value = std::getenv(variable.c_str());
  if (!value) return std::nullopt;
  std::lock_guard<std::mutex> lock(used_mutex());
  auto& list = used();
  bool seen = false;
  for (const auto& [name, v] : list) seen = seen || name == variable;
  if (!seen) list.emplace_back(variable, value);
  return std::string(value);
}

std::optional<std::string> environment_placement(const std::string& variable) {
  const char* value = std::getenv(variable.c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

std::vector<std::pair<std::string, std::string>> environment_defaults_used() {
  std::lock_guard<std::mutex> lock(used_mutex());
  return used();
}

}  // namespace convlab
