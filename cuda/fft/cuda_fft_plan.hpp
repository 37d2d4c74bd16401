#pragma once
// cuda.fft's plan for other strategies that run it on sub-problems (cuda.fft_tiled).

#include <memory>

#include "convlab/algorithm.hpp"
#include "cuda/common/settings.hpp"
#include "fft_options.hpp"

namespace convlab::cuda {

class CudaContext;

/// cuda.fft's plan of `problem` on `context`'s device (the device must be usable), with the
/// GPU settings and what its own knobs decide (their defaults unless given).
std::unique_ptr<Plan> make_cuda_fft_plan(const ConvProblem& problem, Pass pass,
                                         CudaContext& context, const GpuSettings& settings,
                                         const CudaFftOptions& options = {});

}  // namespace convlab::cuda
