#pragma once
// cuda.fft's plan for other strategies that run it on sub-problems (cuda.fft_tiled).

#include <memory>

#include "convlab/algorithm.hpp"
#include "cuda/common/settings.hpp"
#include "strategy/fft_staging.hpp"

namespace convlab::cuda {

class CudaContext;

/// cuda.fft's plan of `problem` on `context`'s device (the device must be usable), with the
/// GPU settings and its cache_filters, staging and graph knobs.
std::unique_ptr<Plan> make_cuda_fft_plan(const ConvProblem& problem, Pass pass,
                                         CudaContext& context, const GpuSettings& settings,
                                         bool cache_filters = false,
                                         FftStaging staging = FftStaging::fused,
                                         bool graph = false);

}  // namespace convlab::cuda
