#pragma once
// The GPU side of DeviceContext: one context per CUDA device, owning a stream, the events
// that time work on it, the cuBLAS handle the plans share, and a counting allocator. The
// header is CUDA-free (the stream and handle types are forward-declared) so that host-only
// tests and the registry can use it.
//
// Device selection: each plan runs on its `device` knob (settings.hpp), an index among the
// devices CUDA_VISIBLE_DEVICES leaves visible, as every CUDA program counts them; the knob's
// default is CONVLAB_CUDA_DEVICE, else 0.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"

struct CUstream_st;    // cudaStream_t is CUstream_st*
struct CUevent_st;     // cudaEvent_t is CUevent_st*
struct cublasContext;  // cublasHandle_t is cublasContext*

namespace convlab::cuda {

struct MemInfo {
  std::size_t free = 0;
  std::size_t total = 0;
};

/// Facts about a device, read once when its context is made.
struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory = 0;
  std::string describe() const;  ///< "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)"
};

/// Parses CONVLAB_CUDA_DEVICE: unset or "" is 0, else a non-negative integer; anything else
/// is Error{invalid_argument} naming the value.
int parse_device_index(const char* value);
/// The device knob's default: CONVLAB_CUDA_DEVICE (through environment_default), else 0.
int default_device_index();

/// Whether device `index` can run this build's kernels: a driver, the device, and a kernel
/// image for its architecture. Probed once per index and cached; the reason names the CUDA
/// status, e.g. "no CUDA device: cudaErrorInsufficientDriver (CUDA driver version is
/// insufficient for CUDA runtime version)".
const Support& device_support(int index);

class CudaContext final : public DeviceContext {
 public:
  /// Use device_context(index); made once per device.
  explicit CudaContext(int index);
  ~CudaContext() override;
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  std::string name() const override;
  void* allocate(std::size_t bytes) override;
  void deallocate(void* pointer) noexcept override;
  void copy_to_device(void* device_dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes) override;
  void fill_bytes(void* device_dst, unsigned char value, std::size_t bytes) override;
  void synchronize() override;
  double time_ms(const std::function<void()>& work) override;

  /// Makes this device current for the calling thread (every entry point does it).
  void activate() const;
  const DeviceInfo& info() const { return info_; }
  CUstream_st* stream() const { return stream_; }
  /// The cuBLAS handle bound to stream(), in this process' math mode (math_mode.hpp).
  cublasContext* cublas() const { return cublas_; }
  /// cudaMemGetInfo of this device.
  MemInfo mem_info() const;

  /// The counting allocator: bytes currently allocated through allocate(), and the most
  /// ever held at once since the last reset_peak().
  std::size_t current_bytes() const;
  std::size_t peak_bytes() const;
  void reset_peak();

 private:
  int index_;
  DeviceInfo info_;
  CUstream_st* stream_ = nullptr;
  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
  cublasContext* cublas_ = nullptr;
  mutable std::mutex mutex_;
  std::map<void*, std::size_t> live_;
  std::size_t current_ = 0, peak_ = 0;
};

/// The context of device `index`, made on first use. Throws Error{unavailable} with
/// device_support(index).reason when the device cannot be used.
CudaContext& device_context(int index);
/// device_context(index) for planning `algorithm`: its Error{unavailable} names the algorithm.
CudaContext& plan_device(const std::string& algorithm, int index);

/// Whether the kernels of this build have an image for the current device: the cudaError_t
/// of cudaFuncGetAttributes on a probe kernel (defined in probe.cu).
int probe_kernel_image();

}  // namespace convlab::cuda
