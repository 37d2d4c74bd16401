#pragma once
// The orchestration of cuda.fft's passes (the derivation is at the top of cuda_fft.cpp)
// written against an abstract set of operations: the plan runs it with cuFFT, cuBLAS and the
// kernels; host tests run the very same code with a plain DFT and loops that follow cuFFT's
// advanced layout and cuBLAS's column-major semantics, so every placement, layout, stride,
// bin count and scale is checked against the reference without a GPU. CUDA-free.

#include <cstdint>

#include "convlab/algorithm.hpp"
#include "fft_cgemm.hpp"
#include "fft_kernels.hpp"
#include "fft_options.hpp"
#include "fft_transform.hpp"
#include "strategy/fft_staging.hpp"

namespace convlab::cuda {

/// Everything a pass runs with, decided at plan time.
struct FftSchedule {
  FftGeometry geometry;
  FftTransform transform;
  CgemmCall call;
  CufftLayout input_a, input_b, output;  ///< the three transforms
  FftStagingLayout staging;              ///< where the inputs are placed (fft_staging.hpp)
  FftCrop crop = FftCrop::separate;
  FftBatchLayout layout = FftBatchLayout::strided;
  /// Whether the transforms go through the transpose buffer (contiguous layout; the 1 x 1
  /// identity has one bin, where both layouts are the same and nothing is transposed).
  bool transposes() const { return layout == FftBatchLayout::contiguous && transform.rank > 0; }
};

/// The schedule of (problem, pass) in the frequency-major layout with 256-byte aligned
/// buffers, `library_work_bytes` of cuFFT work area, the inputs staged as `staging` says, the
/// transforms' batches laid out as `layout` says and the output cropped as `crop` says.
FftSchedule fft_schedule(const ConvProblem& p, Pass pass, int64_t library_work_bytes,
                         FftStaging staging = FftStaging::fused,
                         FftBatchLayout layout = FftBatchLayout::strided,
                         FftCrop crop = FftCrop::separate);

/// What a pass needs done. `transform` is the batched cuFFT transform of `layout` (R2C from
/// `real` to `spectrum` when layout.forward, else C2R from `spectrum` to `real`, unnormalised;
/// rank 0 is the identity on one bin); `which` (0, 1, 2 = input_a, input_b, output) names the
/// plan. `cgemm` is cublasCgemmStridedBatched_64 with alpha 1, beta 0 and batch = bins, the
/// operand pointers at the group's matrices. `inverse_cropped` is the output's C2R (plan 2)
/// with the fused crop: `target` written into the staging header (the kFftCropHeaderBytes
/// before `real`), dst's unplaced elements zeroed, and every value the C2R computes stored
/// by fft_crop_store_at(real, offset, value) instead of into `real`. `transpose` writes the
/// transpose (cols x rows) of a row-major rows x cols matrix of complex values.
class FftOps {
 public:
  virtual ~FftOps() = default;
  virtual void place(const FftPlacement& placement, const float* src, int64_t src_h, int64_t src_w,
                     int64_t planes, int64_t hf, int64_t wf, float* staging) = 0;
  /// Both inputs at once (fused staging): as place() would place each at its region.
  virtual void place_pair(const StagedInput& a, const StagedInput& b,
                          const FftStagingLayout& layout, int64_t hf, int64_t wf,
                          float* staging) = 0;
  virtual void transform(int which, const CufftLayout& layout, float* real, float* spectrum) = 0;
  virtual void cgemm(const CgemmCall& call, const float* a, const float* b, float* c,
                     int64_t bins) = 0;
  virtual void crop(const FftPlacement& placement, const float* staging, int64_t hf, int64_t wf,
                    int64_t planes, int64_t dst_h, int64_t dst_w, float scale, float* dst) = 0;
  virtual void inverse_cropped(const CufftLayout& layout, float* spectrum, float* real,
                               const FftCropTarget& target) = 0;
  virtual void transpose(const float* src, int64_t rows, int64_t cols, float* dst) = 0;
};

/// Runs the pass of `s` on tensors `t` with the workspace at `base` (fft_geometry's buffers at
/// their offsets). With `reuse_filter_spectra`, a pass that reads w (forward, backward-data)
/// neither places nor transforms it: the w spectra already in the workspace, from an earlier
/// run on the same filters, are used as they are.
void run_fft_pass(const ConvProblem& p, const FftSchedule& s, const Tensors& t, unsigned char* base,
                  FftOps& ops, bool reuse_filter_spectra = false);

}  // namespace convlab::cuda
