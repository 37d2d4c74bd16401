#include "output/context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <fstream>
#include <set>

#include "build_info.hpp"
#include "convlab/config.hpp"
#include "convlab/device.hpp"
#include "convlab/numerics.hpp"
#include "convlab/threads.hpp"
#include "output/machine.hpp"
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

// The NVIDIA kernel driver's version, read without CUDA. Empty when there is no NVIDIA driver.
std::string nvidia_driver() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return {};
  return nvidia_driver_version(line);
}

}  // namespace

std::string library_environment(const std::vector<std::string>& variables) {
  // What the libraries under the CPU and GPU algorithms read at run time: thread counts and
  // binding (OpenMP, OpenBLAS), oneDNN's ISA cap and JIT settings, glibc's allocator
  // tunables (huge pages), a preloaded or redirected library, the CUDA libraries' own
  // switches. convlab's own variables are recorded where they act (threads, math_mode,
  // environment_defaults). CUDA_VISIBLE_DEVICES is left out: it picks the device, which
  // `devices` names, and the workers of one sweep differ in it; so are CUDA_HOME and
  // CUDA_PATH, which locate the toolkit for builds and change nothing at run time.
  static const char* const kPrefixes[] = {"OMP_",           "GOMP_",
                                          "KMP_",           "OPENBLAS_",
                                          "GOTO_",          "ONEDNN_",
                                          "DNNL_",          "MKL_",
                                          "MALLOC_",        "CUDA_",
                                          "CUBLAS",         "CUDNN_",
                                          "CUFFT_",         "NVIDIA_TF32_OVERRIDE",
                                          "GLIBC_TUNABLES", "LD_PRELOAD",
                                          "LD_LIBRARY_PATH"};
  std::vector<std::string> recorded;
  for (const std::string& variable : variables) {
    const std::string name = variable.substr(0, variable.find('='));
    if (name == "CUDA_VISIBLE_DEVICES" || name == "CUDA_HOME" || name == "CUDA_PATH") continue;
    for (const char* prefix : kPrefixes) {
      if (name.rfind(prefix, 0) == 0) {
        recorded.push_back(variable);
        break;
      }
    }
  }
  std::sort(recorded.begin(), recorded.end());
  std::string text;
  for (const std::string& variable : recorded) text += (text.empty() ? "" : "; ") + variable;
  return text.empty() ? "none" : text;
}

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
  c["cpu_id"] = cpu_identity();
  c["cpu_features"] = cpu_features();
  c["cpu_caches"] = cpu_caches();
  c["logical_cpus"] = logical_cpus();
  c["transparent_hugepages"] = transparent_hugepages();
  c["threads"] = convlab::num_threads();
  std::vector<std::string> variables;
  for (char** variable = environ; variable && *variable; ++variable) variables.push_back(*variable);
  c["library_environment"] = library_environment(variables);
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
