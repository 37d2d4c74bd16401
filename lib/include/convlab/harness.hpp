#pragma once
/// \file
/// One case on an algorithm's device: its tensors uploaded, its output and workspace
/// poisoned, the result downloaded. Shared by convbench and the tests so that both exercise
/// an algorithm the same way.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"

namespace convlab {

/// The host memory a case may use, judged as benchdnn judges it before allocating anything:
/// a case that would not fit is refused with a clear error instead of being started and
/// killed by the kernel (or by a sanitizer's allocator) half way.
struct HostMemory {
  int64_t total = 0;      ///< RAM this process may use: MemTotal, or a lower cgroup limit
  int64_t available = 0;  ///< RAM available now without swapping: MemAvailable (cgroup too)
  /// The most one case may hold: min(0.75 * total, available). 0.75 is benchdnn's capacity
  /// factor; `available` keeps a case from pushing a loaded machine into swap or the OOM
  /// killer.
  int64_t limit() const;
};

/// Reads /proc/meminfo and the cgroup v2 limit (sysconf where /proc is missing).
HostMemory host_memory();

/// Throws Error{out_of_memory} naming `what`, the bytes asked for and the limit with how it
/// was derived, unless `bytes` <= host_memory().limit(). Allocates nothing.
void check_host_memory(int64_t bytes, const std::string& what);

class CaseBuffers {
 public:
  /// Allocates x, w, y and the workspace on `context`'s device and uploads `host` (whose
  /// output role make_inputs() filled with NaN). The workspace is filled with 0xFF bytes, a
  /// NaN pattern, so a plan that reads scratch it did not write shows it.
  CaseBuffers(DeviceContext& context, const ConvProblem& problem, const HostTensors& host,
              std::size_t workspace_bytes);
  Tensors tensors() const;
  Workspace workspace() const;
  /// Copies the output of `pass` back to the host.
  std::vector<float> download_output(Pass pass) const;
  /// Uploads the output role again from `host` (re-poisons it between runs).
  void reset_output(Pass pass, const HostTensors& host);
  /// Bytes held on the device: the three tensors and the workspace.
  std::size_t device_bytes() const;

 private:
  DeviceContext* context_;
  DeviceBuffer x_, w_, y_, workspace_;
};

}  // namespace convlab
