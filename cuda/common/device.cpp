#include "device.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "check_libs.hpp"
#include "convlab/knobs.hpp"
#include "math_mode.hpp"

#ifndef CONVLAB_CUDA_ARCHITECTURES
#define CONVLAB_CUDA_ARCHITECTURES "unknown"
#endif

namespace convlab::cuda {

std::string DeviceInfo::describe() const {
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", double(total_memory) / (1u << 30));
  return name + " (sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + ", " +
         std::to_string(sm_count) + " SMs, " + memory + ")";
}

int parse_device_index(const char* value) {
  if (value == nullptr || value[0] == '\0') return 0;
  char* end = nullptr;
  const long index = std::strtol(value, &end, 10);
  if (*end != '\0' || index < 0 || index > 1 << 20) {
    throw Error(ErrorCode::invalid_argument, std::string("CONVLAB_CUDA_DEVICE='") + value +
                                                 "': expected a device index 0, 1, ...");
  }
  return static_cast<int>(index);
}

int default_device_index() {
  const auto env = environment_default("CONVLAB_CUDA_DEVICE");
  return parse_device_index(env ? env->c_str() : nullptr);
}

namespace {

std::string status_words(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

Support probe(int index) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return Support::no("no CUDA device: " + status_words(error));
  }
  if (count == 0) return Support::no("no CUDA device: cudaGetDeviceCount found none");
  if (index >= count) {
    const auto visible = environment_default("CUDA_VISIBLE_DEVICES");
    return Support::no("no CUDA device " + std::to_string(index) + ": " + std::to_string(count) +
                       " visible" +
                       (visible ? " (CUDA_VISIBLE_DEVICES=" + *visible + ")" : std::string()));
  }
  cudaError_t e = cudaSetDevice(index);
  if (e == cudaSuccess) e = static_cast<cudaError_t>(probe_kernel_image());
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    cudaDeviceProp prop{};
    const bool named = cudaGetDeviceProperties(&prop, index) == cudaSuccess;
    return Support::no("CUDA device " + std::to_string(index) +
                       (named ? " (" + std::string(prop.name) + ", sm_" +
                                    std::to_string(prop.major) + std::to_string(prop.minor) + ")"
                              : std::string()) +
                       " is not usable by this build (CUDA architectures " +
                       CONVLAB_CUDA_ARCHITECTURES + "): " + status_words(e));
  }
  return Support::yes();
}

}  // namespace

const Support& device_support(int index) {
  static std::mutex mutex;
  static std::map<int, Support> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(index);
  if (it == cache.end()) it = cache.emplace(index, probe(index)).first;
  return it->second;
}

CudaContext::CudaContext(int index) : index_(index) {
  info_.index = index;
  CONVLAB_CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  CONVLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  info_.name = prop.name;
  info_.cc_major = prop.major;
  info_.cc_minor = prop.minor;
  info_.sm_count = prop.multiProcessorCount;
  info_.total_memory = prop.totalGlobalMem;
  // A blocking stream: it orders with the legacy default stream, so work a caller queues
  // with plain cudaMemcpy before a run is seen by the run.
  CONVLAB_CUDA_CHECK(cudaStreamCreate(&stream_));
  CONVLAB_CUDA_CHECK(cudaEventCreate(&start_));
  CONVLAB_CUDA_CHECK(cudaEventCreate(&stop_));
  CONVLAB_CUBLAS_CHECK(cublasCreate(&cublas_));
  CONVLAB_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  // The process default; each plan sets its own allow_tf32 knob's mode before its GEMMs.
  CONVLAB_CUBLAS_CHECK(
      cublasSetMathMode(cublas_, allow_tf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  CONVLAB_CUBLAS_CHECK(cublasSetPointerMode(cublas_, CUBLAS_POINTER_MODE_HOST));
}

CudaContext::~CudaContext() {
  // Errors are ignored: a destructor cannot report them, and at exit the runtime may be gone.
  if (cublas_) cublasDestroy(cublas_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::string CudaContext::name() const { return info_.describe(); }

void CudaContext::activate() const { CONVLAB_CUDA_CHECK(cudaSetDevice(index_)); }

MemInfo CudaContext::mem_info() const {
  activate();
  MemInfo m;
  CONVLAB_CUDA_CHECK(cudaMemGetInfo(&m.free, &m.total));
  return m;
}

void* CudaContext::allocate(std::size_t bytes) {
  activate();
  void* pointer = nullptr;
  // cudaMalloc(0) returns nullptr; hand out one aligned unit so the pointer is distinct.
  const std::size_t asked = bytes == 0 ? 1 : bytes;
  const cudaError_t error = cudaMalloc(&pointer, asked);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    std::size_t free = 0, total = 0;
    const bool known = cudaMemGetInfo(&free, &total) == cudaSuccess;
    throw Error(cuda_error_code(error),
                "cudaMalloc of " + std::to_string(bytes) + " bytes on device " +
                    std::to_string(index_) + " failed: " + status_words(error) +
                    (known ? "; " + std::to_string(free) + " bytes free of " + std::to_string(total)
                           : std::string()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  live_[pointer] = bytes;
  current_ += bytes;
  if (current_ > peak_) peak_ = current_;
  return pointer;
}

void CudaContext::deallocate(void* pointer) noexcept {
  if (!pointer) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(pointer);
    if (it != live_.end()) {
      current_ -= it->second;
      live_.erase(it);
    }
  }
  cudaSetDevice(index_);
  cudaFree(pointer);
}

void CudaContext::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  activate();
  CONVLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaContext::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  activate();
  CONVLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaContext::fill_bytes(void* dst, unsigned char value, std::size_t bytes) {
  if (!bytes) return;
  activate();
  CONVLAB_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, stream_));
}

void CudaContext::synchronize() {
  activate();
  CONVLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // Errors of earlier asynchronous work (a faulting kernel) surface here.
  CONVLAB_CUDA_CHECK(cudaGetLastError());
}

double CudaContext::time_ms(const std::function<void()>& work) {
  activate();
  CONVLAB_CUDA_CHECK(cudaEventRecord(start_, stream_));
  work();
  CONVLAB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  CONVLAB_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  CONVLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

std::size_t CudaContext::current_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

std::size_t CudaContext::peak_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}

void CudaContext::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_ = current_;
}

CudaContext& device_context(int index) {
  const Support& support = device_support(index);
  if (!support) throw Error(ErrorCode::unavailable, support.reason);
  static std::mutex mutex;
  // Contexts live until exit and are never destroyed: at exit the CUDA runtime may already
  // be torn down, and destroying handles then fails in ways no one can report.
  static std::map<int, CudaContext*> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = contexts.find(index);
  if (it == contexts.end()) it = contexts.emplace(index, new CudaContext(index)).first;
  return *it->second;
}

CudaContext& plan_device(const std::string& algorithm, int index) {
  const Support& support = device_support(index);
  if (!support) throw Error(ErrorCode::unavailable, algorithm + ": " + support.reason);
  return device_context(index);
}

}  // namespace convlab::cuda
