#pragma once
// The numerics switch shared by every GPU algorithm. By default fp32 work is done in fp32:
// cuBLAS in CUBLAS_DEFAULT_MATH (never TF32 for SGEMM/CGEMM) and cuDNN in CUDNN_FMA_MATH
// (cuDNN's CUDNN_DEFAULT_MATH would allow TF32 tensor cores on Ampere and later). Setting
// CONVLAB_ALLOW_TF32=1 switches both to tensor-core TF32 (CUBLAS_TF32_TENSOR_OP_MATH,
// CUDNN_TENSOR_OP_MATH), so comparisons between the strategies stay like for like.

#include <string>

#include "convlab/numerics.hpp"

namespace convlab::cuda {

// The switch itself lives in the CUDA-free library, so convbench can report it.
using convlab::allow_tf32;
using convlab::parse_allow_tf32;
/// "fp32" or "tf32", for notes and metadata.
std::string math_mode_name();

/// The error-bound factor of an elementwise (GEMM-like) fp32 strategy under this process'
/// math mode: `fp32_factor` when TF32 is off; with TF32 the inputs are rounded to a 10-bit
/// significand (unit roundoff 2^-11 instead of 2^-24), so the factor grows by 2^13.
double math_mode_factor(double fp32_factor);
/// The same for a plan whose allow_tf32 knob is `tf32`.
double math_mode_factor(double fp32_factor, bool tf32);

}  // namespace convlab::cuda
