#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/threads.hpp"

namespace convlab {

const char* to_string(Device device) noexcept { return device == Device::cpu ? "cpu" : "gpu"; }

namespace {

class HostContext final : public DeviceContext {
 public:
  std::string name() const override {
    return "cpu (" + std::to_string(num_threads()) + " threads)";
  }
  void* allocate(std::size_t bytes) override {
    constexpr std::size_t kAlign = 64;
    const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    if (rounded < bytes) {
      throw Error(ErrorCode::out_of_memory, "host allocation of " + std::to_string(bytes) +
                                                " bytes is too large");
    }
    // Refused before asking: an allocation past the host's memory would otherwise succeed
    // (overcommit) and end in the OOM killer, or abort under a sanitizer's allocator.
    if (rounded > static_cast<std::size_t>(std::numeric_limits<int64_t>::max())) {
      throw Error(ErrorCode::out_of_memory, "host allocation of " + std::to_string(bytes) +
                                                " bytes is too large");
    }
    check_host_memory(static_cast<int64_t>(rounded), "a host allocation");
    void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
    if (!p) {
      throw Error(ErrorCode::out_of_memory,
                  "host allocation of " + std::to_string(bytes) + " bytes failed");
    }
    return p;
  }
  void deallocate(void* pointer) noexcept override { std::free(pointer); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void fill_bytes(void* dst, unsigned char value, std::size_t bytes) override {
    if (bytes) std::memset(dst, value, bytes);
  }
  void synchronize() override {}
  double time_ms(const std::function<void()>& work) override {
    const auto start = std::chrono::steady_clock::now();
    work();
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(stop - start).count();
  }
};

}  // namespace

DeviceContext& host_context() {
  static HostContext context;
  return context;
}

void check_run_arguments(const std::string& algorithm, const ConvProblem& problem, Pass pass,
                         const Tensors& tensors, const Workspace& workspace,
                         std::size_t workspace_needed) {
  const char* missing = nullptr;
  if (!tensors.x) missing = pass == Pass::backward_data ? "dx (Tensors::x)" : "x";
  if (!tensors.w) missing = pass == Pass::backward_filter ? "dw (Tensors::w)" : "w";
  if (!tensors.y) missing = pass == Pass::forward ? "y" : "dy (Tensors::y)";
  if (missing) {
    throw Error(ErrorCode::invalid_argument, algorithm + " " + to_string(pass) + " " +
                                                 problem.descriptor() + ": tensor " + missing +
                                                 " is null");
  }
  if (workspace.bytes < workspace_needed || (workspace_needed > 0 && !workspace.data)) {
    throw Error(ErrorCode::invalid_argument,
                algorithm + " " + to_string(pass) + " " + problem.descriptor() + ": workspace of " +
                    std::to_string(workspace.bytes) + " bytes" +
                    (workspace.data ? "" : " (null)") + ", the plan needs " +
                    std::to_string(workspace_needed));
  }
}

}  // namespace convlab
