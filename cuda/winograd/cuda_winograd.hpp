#pragma once
// cuda.winograd internals the host tests check: the options its plans pass to the shared
// geometry (strategy/winograd_geometry.hpp) and its error bound (the shared one with one
// partial dU, scaled by the math mode). CUDA-free.

#include <cstddef>
#include <cstdint>

#include "convlab/accuracy.hpp"
#include "convlab/problem.hpp"
#include "strategy/winograd_geometry.hpp"

namespace convlab::cuda {

/// The geometry options of a cuda.winograd plan: variant m, `chunk` tiles per chunk (0 =
/// auto, within kWinogradGpuChunkBytes), one worker (one stream: the chunks run in order),
/// 256-byte buffers, and cuBLAS's workspace of `cublas_bytes` first.
winograd::WinogradOptions cuda_winograd_options(int m, int64_t chunk, std::size_t cublas_bytes);

/// The normwise bound of variant m on the GPU: cpu.winograd's derivation with the chunks
/// summed in one dU (no per-thread partials), times the TF32 factor when `tf32`.
ErrorBound cuda_winograd_error_bound(const ConvProblem& problem, Pass pass, int m, bool tf32);

}  // namespace convlab::cuda
