#include "output/context.hpp"

#include <unistd.h>

#include <cctype>
#include <ctime>
#include <fstream>
#include <set>

#include "build_info.hpp"
#include "convlab/config.hpp"
#include "convlab/device.hpp"
#include "convlab/numerics.hpp"
#include "convlab/threads.hpp"
#include "sweep/cases.hpp"

namespace convbench {

namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// The CPU model as the kernel names it (x86: "model name"; some ARM kernels: "Model").
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    for (const char* key : {"model name", "Model"}) {
      if (line.rfind(key, 0) == 0) {
        const size_t colon = line.find(':');
        if (colon != std::string::npos) {
          const size_t start = line.find_first_not_of(" \t", colon + 1);
          if (start != std::string::npos) return line.substr(start);
        }
      }
    }
  }
  return "unknown";
}

// The NVIDIA kernel driver's version, read without CUDA. Empty when there is no NVIDIA driver.
std::string nvidia_driver() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return {};
  return nvidia_driver_version(line);
}

}  // namespace

std::string nvidia_driver_version(const std::string& line) {
  // The first word made of digits and at least one dot: the proprietary module writes
  // "...Kernel Module  550.54.15  ...", the open one "...Open Kernel Module for x86_64
  // 580.159.04  ...", so the word after "Kernel Module" is not always the version.
  size_t at = 0;
  while (at < line.size()) {
    const size_t start = line.find_first_not_of(" \t", at);
    if (start == std::string::npos) break;
    size_t end = line.find_first_of(" \t", start);
    if (end == std::string::npos) end = line.size();
    const std::string word = line.substr(start, end - start);
    const bool digits_and_dots = word.find_first_not_of("0123456789.") == std::string::npos;
    if (digits_and_dots && std::isdigit(static_cast<unsigned char>(word.front())) &&
        word.find('.') != std::string::npos) {
      return word;
    }
    at = end;
  }
  return line;
}

const char* convbench_version() { return CONVLAB_VERSION; }

std::string context_text(const nlohmann::ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

Context collect_context(const std::vector<const convlab::Algorithm*>& algorithms) {
  // Device names come from the algorithms' own contexts, once per device, for the devices
  // the sweep uses; an unavailable device is not asked.
  std::vector<std::string> devices;
  std::set<std::string> seen;
  for (const convlab::Algorithm* algorithm : algorithms) {
    if (!algorithm->available()) continue;
    const std::string name = algorithm->context().name();
    if (seen.insert(name).second) devices.push_back(name);
  }
  std::string device_list;
  for (const auto& d : devices) device_list += (device_list.empty() ? "" : "; ") + d;
  const std::string driver = nvidia_driver();

  Context c = Context::object();
  c["convbench_version"] = convbench_version();
  c["git_commit"] = CONVBENCH_GIT_COMMIT;
  c["date"] = utc_now();
  c["host"] = host_name();
  c["cpu"] = cpu_model();
  c["threads"] = convlab::num_threads();
  c["devices"] = device_list.empty() ? "none" : device_list;
  c["gpu_driver"] = driver.empty() ? "none" : driver;
  c["libraries"] = CONVBENCH_LIBRARIES;
  c["compiler"] = CONVBENCH_COMPILER;
  c["build_type"] = CONVBENCH_BUILD_TYPE;
  // Numerics are explicit: the one switch that changes them (CONVLAB_ALLOW_TF32) is recorded.
  c["math_mode"] = convlab::math_mode_description();
  return c;
}

void add_layer_context(Context& context, const LayerOptions& o,
                       const std::vector<const convlab::Algorithm*>& algorithms) {
  const bool default_sweep = o.suites.empty() && o.batch_files.empty() && o.shapes.empty();
  context["mb"] = o.mb            ? std::to_string(*o.mb)
                  : default_sweep ? std::to_string(kDefaultSweepMb) + " (default sweep)"
                                  : "as listed";
  context["passes"] = o.passes;
  std::string names;
  for (const auto* a : algorithms) names += (names.empty() ? "" : ",") + a->name();
  context["algorithms"] = names;
}

void add_run_context(Context& context, const RunOptions& o, const std::string& check_scope,
                     const std::vector<const convlab::Algorithm*>& algorithms) {
  context["seed"] = o.seed;
  context["reps"] = o.reps;
  context["warmup"] = o.warmup;
  context["max_time_s"] = o.max_time;
  context["interleave"] = o.interleave ? "on" : "off";
  context["check"] = o.check ? "reference, " + check_scope : "off";
  add_layer_context(context, o, algorithms);
}

}  // namespace convbench
