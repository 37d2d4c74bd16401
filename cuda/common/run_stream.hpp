#pragma once
// The stream a run is issued on. Plan::run takes the caller's stream (convlab::Stream: a
// cudaStream_t, or null for the context's own), and every kernel, cuFFT, cuBLAS and cuDNN
// call of the run goes on it, so research code can order a convlab pass with its own work
// and capture it into a CUDA graph. What may not happen inside a run for that (allocation,
// synchronisation, reading device memory back) happens at plan time. CUDA-free header.

#include <cstddef>
#include <string>

#include "convlab/algorithm.hpp"
#include "device.hpp"

namespace convlab::cuda {

/// The stream of a run: the caller's, or the context's own when it passes none.
inline CUstream_st* run_stream(const CudaContext& context, Stream stream) {
  return stream.handle ? static_cast<CUstream_st*>(stream.handle) : context.stream();
}

/// The start of a run: its arguments checked against the plan (check_run_arguments, naming
/// `algorithm`), the plan's device made current, and the stream the run goes on.
inline CUstream_st* begin_run(const std::string& algorithm, const ConvProblem& problem, Pass pass,
                              const Tensors& t, const Workspace& ws, std::size_t workspace_bytes,
                              const CudaContext& context, Stream stream) {
  check_run_arguments(algorithm, problem, pass, t, ws, workspace_bytes);
  context.activate();
  return run_stream(context, stream);
}

/// Binds the context's shared cuBLAS handle to a run's stream with the run's workspace as
/// its scratch (cublasSetStream first: it resets the workspace) and the plan's math mode
/// (the handle is the device's, shared by every plan on it, so each run sets its own: TF32
/// tensor ops when `tf32`, else CUBLAS_DEFAULT_MATH, true fp32); on leaving, binds it back
/// to the context's stream, so the handle never keeps a caller's stream or a pointer into a
/// caller's workspace once the run has returned.
class CublasRunBinding {
 public:
  CublasRunBinding(const CudaContext& context, CUstream_st* stream, void* workspace,
                   std::size_t bytes, bool tf32);
  ~CublasRunBinding();
  CublasRunBinding(const CublasRunBinding&) = delete;
  CublasRunBinding& operator=(const CublasRunBinding&) = delete;

 private:
  const CudaContext& context_;
};

/// A plan whose run binds cuBLAS to one region of its workspace: the shared start of the
/// runs of cuda.im2col and cuda.winograd. A subclass sets its workspace in its constructor
/// and issues its pass in run_pass, on the run's stream only (capturable into a graph).
class CublasPlan : public Plan {
 public:
  std::size_t workspace_bytes() const override { return workspace_bytes_; }

 protected:
  CublasPlan(const char* algorithm, const ConvProblem& p, Pass pass, CudaContext& context,
             bool tf32)
      : p_(p), pass_(pass), context_(context), tf32_(tf32), algorithm_(algorithm) {}

  /// The plan's workspace, and the region of it cuBLAS may use.
  void set_workspace(std::size_t total, std::size_t cublas_offset, std::size_t cublas_bytes) {
    workspace_bytes_ = total;
    cublas_offset_ = cublas_offset;
    cublas_bytes_ = cublas_bytes;
  }

  virtual void run_pass(const Tensors& t, unsigned char* workspace, CUstream_st* stream) = 0;

  void execute(const Tensors& t, const Workspace& ws, Stream stream) final {
    CUstream_st* s = begin_run(algorithm_, p_, pass_, t, ws, workspace_bytes_, context_, stream);
    unsigned char* base = static_cast<unsigned char*>(ws.data);
    CublasRunBinding cublas(context_, s, base + cublas_offset_, cublas_bytes_, tf32_);
    run_pass(t, base, s);
  }

  ConvProblem p_;
  Pass pass_;
  CudaContext& context_;
  bool tf32_;

 private:
  const char* algorithm_;
  std::size_t workspace_bytes_ = 0, cublas_offset_ = 0, cublas_bytes_ = 0;
};

}  // namespace convlab::cuda
