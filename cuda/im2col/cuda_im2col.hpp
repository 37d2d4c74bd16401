#pragma once
// cuda.im2col internals: the workspace layout of a plan (the formula of
// docs/strategy-gpu.md, in code) as a CUDA-free function, so host tests check it, and the
// error bound shared with the tests.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"

namespace convlab::cuda {

/// The automatic images per column buffer: the fewest images whose columns reach this many
/// GEMM columns, b = ceil(kIm2colTargetColumns / (OH*OW)), at most mb ...
inline constexpr int64_t kIm2colTargetColumns = 8192;
/// ... and at most what keeps the column buffer within this many bytes (b >= 1 regardless).
inline constexpr int64_t kIm2colColumnCap = int64_t(256) << 20;

/// What a cuda.im2col plan holds and how its workspace is cut, bytes:
///   cublas = the cuBLAS workspace (settings.hpp), first, 256-byte aligned
///   col    = pointwise(fwd, bwd_data; bwd_filter with b = 1) ? 0 : 4 * L * b*P
///   stage  = bwd_filter and b > 1 ? 4 * K/g * b*P : 0
///   workspace = round256(cublas) + round256(col) + stage   (L = C/g*R*S, P = OH*OW)
struct CudaIm2colLayout {
  int64_t images = 1;      ///< b: images per column buffer (and per batched GEMM)
  int64_t chunks = 1;      ///< ceil(mb / b)
  bool pointwise = false;  ///< 1x1 / stride 1 / pad 0 and the pass reads x or writes dx directly
  std::size_t cublas_offset = 0, cublas_bytes = 0;
  std::size_t col_offset = 0, col_bytes = 0;
  std::size_t stage_offset = 0, stage_bytes = 0;
  std::size_t workspace_bytes = 0;
  std::string describe() const;
};

/// The layout of (problem, pass) with `images_setting` images per buffer (0 = automatic)
/// and a cuBLAS workspace of `cublas_bytes`. Validates the problem.
CudaIm2colLayout cuda_im2col_layout(const ConvProblem& problem, Pass pass, int64_t images_setting,
                                    std::size_t cublas_bytes);

/// The elementwise bound of cuda.im2col (as cpu.im2col's, with the chunks of backward-filter
/// in its chain), scaled by the math mode.
ErrorBound cuda_im2col_error_bound(const ConvProblem& problem, Pass pass, int64_t chunks);
/// The same for a plan whose allow_tf32 knob is `tf32` (the above uses the process default).
ErrorBound cuda_im2col_error_bound(const ConvProblem& problem, Pass pass, int64_t chunks,
                                   bool tf32);

/// A cuda.im2col instance with a fixed number of images per column buffer (0 = automatic);
/// the registry's instance reads CONVLAB_CUDA_IM2COL_IMAGES instead. For tests.
std::unique_ptr<Algorithm> make_cuda_im2col(int64_t images_setting);

}  // namespace convlab::cuda
