#pragma once
/// \file
/// DeviceContext: the memory, copy and timing services of one device, so that harnesses
/// (convbench, the tests) drive CPU and GPU algorithms through the same code.

#include <cstddef>
#include <functional>
#include <string>

namespace convlab {

class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  /// Human-readable device name for metadata, e.g. "cpu: 2 threads" or "NVIDIA H200".
  virtual std::string name() const = 0;
  /// Allocates bytes on the device (64-byte aligned at least). Throws Error{out_of_memory}
  /// naming the bytes requested (and free, where the device can tell).
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* pointer) noexcept = 0;
  virtual void copy_to_device(void* device_dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) = 0;
  /// Sets `bytes` bytes at `device_dst` to `value` (used to poison workspaces in checks).
  virtual void fill_bytes(void* device_dst, unsigned char value, std::size_t bytes) = 0;
  /// Waits until all work queued on the device has finished.
  virtual void synchronize() = 0;
  /// Runs `work` once and returns its duration in milliseconds, measured the device's way
  /// (steady clock on the CPU, events on the stream on a GPU).
  virtual double time_ms(const std::function<void()>& work) = 0;
};

/// The host's context: aligned heap memory, memcpy, steady clock.
DeviceContext& host_context();

/// Owning device buffer from a context (RAII).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceContext& context, std::size_t bytes)
      : context_(&context), bytes_(bytes), data_(bytes ? context.allocate(bytes) : nullptr) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) context_->deallocate(data_);
  }
  void* data() const { return data_; }
  float* floats() const { return static_cast<float*>(data_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(context_, other.context_);
    std::swap(bytes_, other.bytes_);
    std::swap(data_, other.data_);
  }
  DeviceContext* context_ = nullptr;
  std::size_t bytes_ = 0;
  void* data_ = nullptr;
};

}  // namespace convlab
