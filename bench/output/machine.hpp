#pragma once
// What the machine is, as the kernel describes it (/proc/cpuinfo, /sys): the facts besides
// the CPU's name that change a CPU number, so that a sweep's metadata tells apart two
// machines of the same name (a hypervisor may report one name, or a family and model of no
// real CPU, for several) and records the one system setting that moves large buffers' times.
// The parsers take the texts, so they are tested without the files.

#include <filesystem>
#include <string>

namespace convbench {

/// The CPU model as the kernel names it (x86: "model name"; some ARM kernels: "Model"), from
/// the text of /proc/cpuinfo; "unknown" when it names none.
std::string cpu_model_in(const std::string& cpuinfo);

/// "family 6, model 167, stepping 1" from the text of /proc/cpuinfo (x86); "unknown" when it
/// gives none of them.
std::string cpu_identity_in(const std::string& cpuinfo);

/// The instruction set extensions that decide which kernels run (convlab's own, OpenBLAS's
/// and oneDNN's), those of them the first "flags" line of /proc/cpuinfo lists, space-separated
/// in a fixed order; "none of ..." when it lists none, "unknown" without a flags line.
std::string cpu_features_in(const std::string& cpuinfo);

/// CPU 0's data and unified caches under `cache_dir` (/sys/devices/system/cpu/cpu0/cache):
/// "L1d 48 KiB, L2 2 MiB, L3 480 MiB (2 CPUs)", the count of CPUs where a cache is shared;
/// "unknown" when the folder gives none.
std::string cpu_caches_in(const std::filesystem::path& cache_dir);

/// The mode chosen in the text of /sys/kernel/mm/transparent_hugepage/enabled
/// ("always [madvise] never" -> "madvise"); the text, trimmed, when it marks none.
std::string transparent_hugepage_mode(const std::string& enabled);

/// The readers of this machine's files, "unknown" where a file is missing.
std::string cpu_model();
std::string cpu_identity();
std::string cpu_features();
std::string cpu_caches();
std::string transparent_hugepages();
/// "2 online, 2 in this process's affinity".
std::string logical_cpus();

}  // namespace convbench
