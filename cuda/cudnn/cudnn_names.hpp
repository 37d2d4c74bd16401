#pragma once
// The names of the cudnn.* algorithms. One Algorithm serves all three passes, while cuDNN
// numbers its algorithms per pass (cudnnConvolutionFwdAlgo_t, ...BwdDataAlgo_t,
// ...BwdFilterAlgo_t). A name stands for the enumerator of that spelling in each pass that
// has one: cudnn.fft is FWD_ALGO_FFT, BWD_DATA_ALGO_FFT and BWD_FILTER_ALGO_FFT; cudnn.gemm
// exists only for the forward pass and cudnn.algo_3 only for backward-filter. supports()
// says so for the other passes. The table is CUDA-free so that host tests check it.

#include <string>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/problem.hpp"

namespace convlab::cuda {

struct CudnnAlgoName {
  const char* name;  ///< the part after "cudnn."
  int forward;       ///< cudnnConvolutionFwdAlgo_t value, or -1
  int backward_data;
  int backward_filter;
  /// Per cuDNN's documentation (cudnn_ops.h): BWD_DATA_ALGO_0, BWD_FILTER_ALGO_0 and
  /// BWD_FILTER_ALGO_3 accumulate with atomics and are not deterministic; every other
  /// legacy algorithm is.
  bool deterministic;
  /// The strategy cuDNN's documentation gives the algorithm (ALGO_0/1/3 are unnamed GEMM-like
  /// reductions there: `direct`).
  Family family;
};

/// Every legacy cuDNN 9 convolution algorithm, each name once.
const std::vector<CudnnAlgoName>& cudnn_algo_names();
/// The enumerator value of `entry` for `pass`, or -1 when that pass has none.
int cudnn_algo_for(const CudnnAlgoName& entry, Pass pass);
/// cuDNN's spelling of the enumerator, e.g. "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING";
/// "unknown" for a value not in the table.
std::string cudnn_enum_name(Pass pass, int algo);
/// The registry name of an enumerator value (for cudnn.find's notes), e.g. "cudnn.algo_1".
std::string cudnn_registry_name(Pass pass, int algo);
/// The passes `entry` serves, as "fwd, bwd_data", for messages.
std::string cudnn_passes_of(const CudnnAlgoName& entry);

}  // namespace convlab::cuda
