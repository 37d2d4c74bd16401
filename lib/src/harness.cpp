#include "convlab/harness.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "convlab/error.hpp"

namespace convlab {

namespace {

// A "Key:  N kB" line of /proc/meminfo, in bytes; -1 when absent.
int64_t meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size() + 1, key + ":") != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t kib = -1;
    fields >> kib;
    return kib >= 0 && kib < std::numeric_limits<int64_t>::max() / 1024 ? kib * 1024 : -1;
  }
  return -1;
}

// A number in a cgroup v2 file ("max" or missing: -1).
int64_t cgroup_value(const char* file) {
  std::ifstream in(std::string("/sys/fs/cgroup/") + file);
  int64_t value = -1;
  if (!(in >> value)) return -1;
  return value;
}

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

int64_t HostMemory::limit() const {
  return std::min(static_cast<int64_t>(0.75 * static_cast<double>(total)), available);
}

HostMemory host_memory() {
  HostMemory m;
  m.total = meminfo_bytes("MemTotal");
  m.available = meminfo_bytes("MemAvailable");
  const long page = ::sysconf(_SC_PAGESIZE);
  if (m.total < 0) m.total = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * page;
  if (m.available < 0) m.available = static_cast<int64_t>(::sysconf(_SC_AVPHYS_PAGES)) * page;
  const int64_t cgroup_max = cgroup_value("memory.max");
  if (cgroup_max > 0 && cgroup_max < m.total) m.total = cgroup_max;
  const int64_t cgroup_used = cgroup_value("memory.current");
  if (cgroup_max > 0 && cgroup_used >= 0) {
    m.available = std::min(m.available, std::max<int64_t>(cgroup_max - cgroup_used, 0));
  }
  return m;
}

void check_host_memory(int64_t bytes, const std::string& what) {
  const HostMemory m = host_memory();
  if (bytes <= m.limit()) return;
  throw Error(ErrorCode::out_of_memory,
              what + " needs " + std::to_string(bytes) + " bytes (" + gib(bytes) +
                  ") of host memory; the limit is " + gib(m.limit()) +
                  " (the lower of 0.75 x RAM " + gib(m.total) + " and available " +
                  gib(m.available) + "); nothing was allocated");
}

namespace {
DeviceBuffer upload(DeviceContext& context, const std::vector<float>& host) {
  DeviceBuffer buffer(context, host.size() * sizeof(float));
  context.copy_to_device(buffer.data(), host.data(), buffer.bytes());
  return buffer;
}
}  // namespace

// On the host the whole case is checked before its first buffer is allocated, so that the
// refusal names the case and its workspace rather than one anonymous allocation.
static DeviceContext* checked_context(DeviceContext& context, const ConvProblem& problem,
                                      std::size_t workspace_bytes) {
  if (&context == &host_context()) {
    const int64_t ws = workspace_bytes > static_cast<std::size_t>(INT64_MAX)
                           ? INT64_MAX
                           : static_cast<int64_t>(workspace_bytes);
    int64_t total = 0;
    if (__builtin_add_overflow(problem.tensor_bytes().total(), ws, &total)) total = INT64_MAX;
    check_host_memory(total, "the buffers of " + problem.descriptor() +
                                 " (x, w, y and a workspace of " +
                                 std::to_string(workspace_bytes) + " bytes)");
  }
  return &context;
}

CaseBuffers::CaseBuffers(DeviceContext& context, const ConvProblem& problem,
                         const HostTensors& host, std::size_t workspace_bytes)
    : context_(checked_context(context, problem, workspace_bytes)),
      x_(upload(context, host.x)),
      w_(upload(context, host.w)),
      y_(upload(context, host.y)),
      workspace_(context, workspace_bytes) {
  context.fill_bytes(workspace_.data(), 0xFF, workspace_bytes);
  context.synchronize();
}

Tensors CaseBuffers::tensors() const { return {x_.floats(), w_.floats(), y_.floats()}; }

Workspace CaseBuffers::workspace() const { return {workspace_.data(), workspace_.bytes()}; }

static const DeviceBuffer& role(Pass pass, const DeviceBuffer& x, const DeviceBuffer& w,
                                const DeviceBuffer& y) {
  return pass == Pass::forward ? y : pass == Pass::backward_data ? x : w;
}

std::vector<float> CaseBuffers::download_output(Pass pass) const {
  const DeviceBuffer& out = role(pass, x_, w_, y_);
  std::vector<float> host(out.bytes() / sizeof(float));
  context_->synchronize();
  context_->copy_to_host(host.data(), out.data(), out.bytes());
  return host;
}

void CaseBuffers::reset_output(Pass pass, const HostTensors& host) {
  const DeviceBuffer& out = role(pass, x_, w_, y_);
  context_->copy_to_device(out.data(), host.output(pass).data(), out.bytes());
  context_->synchronize();
}

std::size_t CaseBuffers::device_bytes() const {
  return x_.bytes() + w_.bytes() + y_.bytes() + workspace_.bytes();
}

}  // namespace convlab
