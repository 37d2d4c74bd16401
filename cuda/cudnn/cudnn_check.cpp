#include "cudnn_check.hpp"

#include <map>
#include <mutex>

namespace convlab::cuda {

void fail_cudnn(int status, const char* call, const char* file, int line) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof detail);
  throw Error(cudnn_error_code(status),
              failure_message(cudnnGetErrorString(static_cast<cudnnStatus_t>(status)), detail, call,
                              file, line));
}

cudnnHandle_t cudnn_handle(CudaContext& context) {
  static std::mutex mutex;
  static std::map<int, cudnnHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(context.info().index);
  if (it == handles.end()) {
    context.activate();
    cudnnHandle_t handle = nullptr;
    CONVLAB_CUDNN_CHECK(cudnnCreate(&handle));
    CONVLAB_CUDNN_CHECK(cudnnSetStream(handle, context.stream()));
    it = handles.emplace(context.info().index, handle).first;
  }
  return it->second;
}

}  // namespace convlab::cuda
