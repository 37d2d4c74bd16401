#pragma once
// What the cudnn.* algorithms share: the descriptors of a problem, the workspace-size
// query, running one legacy algorithm, availability, error bounds. Compiled only with cuDNN.

#include <cudnn.h>

#include <cstddef>

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"
#include "cudnn_check.hpp"

namespace convlab::cuda {

/// The four legacy descriptors of a problem (fp32, NCHW, KCRS, cross-correlation, groups),
/// with the convolution's math type set from a plan's allow_tf32 knob.
class CudnnDescriptors {
 public:
  CudnnDescriptors(const ConvProblem& problem, bool tf32);
  ~CudnnDescriptors();
  CudnnDescriptors(const CudnnDescriptors&) = delete;
  CudnnDescriptors& operator=(const CudnnDescriptors&) = delete;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

 private:
  void release() noexcept;
};

/// CUDNN_FMA_MATH (fp32 only) by default, CUDNN_DEFAULT_MATH (TF32 permitted) when the
/// plan's allow_tf32 knob is set.
cudnnMathType_t cudnn_math_type(bool tf32);
const char* cudnn_math_type_name(cudnnMathType_t type);

/// cudnnGet*WorkspaceSize for the pass and algorithm; returns the status rather than
/// throwing, since CUDNN_STATUS_NOT_SUPPORTED* is how cuDNN says "not this problem".
cudnnStatus_t cudnn_workspace_size(cudnnHandle_t handle, const CudnnDescriptors& d, Pass pass,
                                   int algo, std::size_t* bytes);

/// Whether a status of the workspace-size query means "this algorithm does not do this
/// (valid) problem": the NOT_SUPPORTED and BAD_PARAM families.
bool cudnn_declines(cudnnStatus_t status);

/// Runs the pass with one legacy algorithm (alpha 1, beta 0: the output is overwritten) on
/// the run's stream (run_stream.hpp): `handle`, `context`'s, is bound to it for the call and
/// back to the context's stream after.
void cudnn_run(const CudaContext& context, cudnnHandle_t handle, const CudnnDescriptors& d,
               Pass pass, int algo, const Tensors& t, void* workspace, std::size_t workspace_bytes,
               Stream stream);

/// Whether cuDNN can be used here: a usable CUDA device, a cuDNN library of the major
/// version this build was compiled against, and a handle. Probed once.
const Support& cudnn_available();

/// The checks that do not need a device: the problem is valid (throws otherwise), pads each
/// axis symmetrically and fits cuDNN's int-sized legacy descriptors.
Support cudnn_fits_legacy_api(const ConvProblem& problem);

/// The error bound of a legacy algorithm by its family: elementwise for the direct/GEMM
/// ones, normwise for FFT and Winograd (both transform the data), scaled for TF32.
ErrorBound cudnn_error_bound(Family family, const ConvProblem& problem, Pass pass, bool tf32);

/// The context of device `device`, checked usable with cuDNN (Error{unavailable} otherwise).
CudaContext& cudnn_context(int device);

}  // namespace convlab::cuda
