#include "pass_graph.hpp"

#include <cuda_runtime.h>

#include "check.hpp"

namespace convlab::cuda {

PassGraph::~PassGraph() { drop(); }

void PassGraph::drop() {
  if (exec_) cudaGraphExecDestroy(exec_);
  exec_ = nullptr;
  cache_.forget();
}

void PassGraph::run(const GraphKey& key, CUstream_st* stream, const std::function<void()>& issue) {
  bool capturing = false;
  if (cache_.enabled()) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CONVLAB_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    capturing = status != cudaStreamCaptureStatusNone;
  }
  const GraphStep step = cache_.next(key, capturing);
  if (step == GraphStep::direct) return issue();
  if (step == GraphStep::replay) {
    CONVLAB_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
    return;
  }
  // Thread-local mode: other threads' unrelated CUDA calls do not break this capture.
  CONVLAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    issue();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);  // ends the capture whatever its state
    if (partial) cudaGraphDestroy(partial);
    drop();
    throw;
  }
  cudaGraph_t graph = nullptr;
  CONVLAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  bool updated = false;
  if (step == GraphStep::update && exec_) {
    cudaGraphExecUpdateResultInfo info{};
    updated = cudaGraphExecUpdate(exec_, graph, &info) == cudaSuccess;
    if (!updated) {
      cudaGetLastError();  // the refused update is answered by a fresh instantiation
      drop();
    }
  }
  if (!updated) {
    const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
    if (made != cudaSuccess) exec_ = nullptr;
    cudaGraphDestroy(graph);
    CONVLAB_CUDA_CHECK(made);
  } else {
    cudaGraphDestroy(graph);
  }
  cache_.captured(key);
  const cudaError_t launched = cudaGraphLaunch(exec_, stream);
  if (launched != cudaSuccess) drop();
  CONVLAB_CUDA_CHECK(launched);
}

}  // namespace convlab::cuda
