#include "output/machine.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace convbench {

namespace fs = std::filesystem;

namespace {

std::string trimmed(const std::string& text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return {};
  return text.substr(start, text.find_last_not_of(" \t\r\n") - start + 1);
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value of the first /proc/cpuinfo line whose key is `key` (the key is padded with
// tabs before its colon), or empty.
std::string cpuinfo_value(const std::string& cpuinfo, const std::string& key) {
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon != std::string::npos && trimmed(line.substr(0, colon)) == key) {
      return trimmed(line.substr(colon + 1));
    }
  }
  return {};
}

// sysfs writes cache sizes as "48K"; shown in binary units, "2048K" as "2 MiB".
std::string binary_size(const std::string& size) {
  if (size.size() < 2 || size.back() != 'K' ||
      size.find_first_not_of("0123456789") != size.size() - 1) {
    return size;
  }
  long long kib = 0;
  try {
    kib = std::stoll(size.substr(0, size.size() - 1));
  } catch (const std::exception&) {  // more digits than a long long holds: kept as written
    return size;
  }
  return kib % 1024 == 0 ? std::to_string(kib / 1024) + " MiB" : std::to_string(kib) + " KiB";
}

// The CPUs a sysfs CPU list names ("0-3,8" -> 5), or 0 for a list it cannot read.
int cpu_list_count(const std::string& list) {
  int count = 0;
  std::istringstream in(list);
  std::string range;
  while (std::getline(in, range, ',')) {
    const size_t dash = range.find('-');
    try {
      const int first = std::stoi(range.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
      if (last < first) return 0;
      count += last - first + 1;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return count;
}

}  // namespace

std::string cpu_model_in(const std::string& cpuinfo) {
  for (const char* key : {"model name", "Model"}) {
    if (std::string value = cpuinfo_value(cpuinfo, key); !value.empty()) return value;
  }
  return "unknown";
}

std::string cpu_identity_in(const std::string& cpuinfo) {
  std::string identity;
  for (const char* key : {"cpu family", "model", "stepping"}) {
    const std::string value = cpuinfo_value(cpuinfo, key);
    if (value.empty()) continue;
    const std::string name = std::string(key) == "cpu family" ? "family" : key;
    identity += (identity.empty() ? "" : ", ") + name + " " + value;
  }
  return identity.empty() ? "unknown" : identity;
}

std::string cpu_features_in(const std::string& cpuinfo) {
  // What the CPU kernels dispatch on: convlab's (avx2 + fma, avx512f), OpenBLAS's and
  // oneDNN's (which also look at the AVX-512 subsets, VNNI, BF16 and AMX).
  static const char* const kFeatures[] = {
      "sse4_2",   "avx",         "avx2",        "fma",         "avx512f",  "avx512bw", "avx512vl",
      "avx512dq", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16"};
  const std::string flags = cpuinfo_value(cpuinfo, "flags");
  if (flags.empty()) return "unknown";
  std::istringstream in(flags);
  std::vector<std::string> listed;
  for (std::string flag; in >> flag;) listed.push_back(flag);
  std::string features;
  for (const char* feature : kFeatures) {
    for (const std::string& flag : listed) {
      if (flag == feature) {
        features += (features.empty() ? "" : " ") + flag;
        break;
      }
    }
  }
  return features.empty() ? "none of sse4_2, avx, avx2, avx512f" : features;
}

std::string cpu_caches_in(const fs::path& cache_dir) {
  std::vector<fs::path> indexes;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(cache_dir, error)) {
    if (entry.path().filename().string().rfind("index", 0) == 0) indexes.push_back(entry.path());
  }
  std::sort(indexes.begin(), indexes.end());
  std::string caches;
  for (const fs::path& index : indexes) {
    const std::string level = trimmed(file_text(index / "level"));
    const std::string type = trimmed(file_text(index / "type"));
    const std::string size = trimmed(file_text(index / "size"));
    if (level.empty() || size.empty() || type == "Instruction") continue;
    const int sharing = cpu_list_count(trimmed(file_text(index / "shared_cpu_list")));
    caches += (caches.empty() ? "" : ", ") + ("L" + level) + (type == "Data" ? "d " : " ") +
              binary_size(size) +
              (sharing > 1 ? " (" + std::to_string(sharing) + " CPUs)" : std::string());
  }
  return caches.empty() ? "unknown" : caches;
}

std::string transparent_hugepage_mode(const std::string& enabled) {
  const size_t open = enabled.find('[');
  const size_t close = enabled.find(']', open);
  if (open == std::string::npos || close == std::string::npos) {
    const std::string text = trimmed(enabled);
    return text.empty() ? "unknown" : text;
  }
  return enabled.substr(open + 1, close - open - 1);
}

std::string cpu_model() { return cpu_model_in(file_text("/proc/cpuinfo")); }

std::string cpu_identity() { return cpu_identity_in(file_text("/proc/cpuinfo")); }

std::string cpu_features() { return cpu_features_in(file_text("/proc/cpuinfo")); }

std::string cpu_caches() { return cpu_caches_in("/sys/devices/system/cpu/cpu0/cache"); }

std::string transparent_hugepages() {
  return transparent_hugepage_mode(file_text("/sys/kernel/mm/transparent_hugepage/enabled"));
}

std::string logical_cpus() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO(&set);
  const int affinity = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
  return (online > 0 ? std::to_string(online) : std::string("unknown")) + " online, " +
         (affinity > 0 ? std::to_string(affinity) : std::string("unknown")) +
         " in this process's affinity";
}

}  // namespace convbench
