#pragma once
/// \file
/// The library-wide numerics switch. By default every strategy computes fp32 in fp32; setting
/// CONVLAB_ALLOW_TF32=1 lets the GPU strategies and cuDNN use TF32 tensor cores (both or
/// neither, so comparisons stay like for like). Every convbench output records the mode.

#include <string>

namespace convlab {

/// Parses a CONVLAB_ALLOW_TF32 value: unset, "" or "0" is false, "1" is true; anything else
/// is Error{invalid_argument} naming the value.
bool parse_allow_tf32(const char* value);
/// CONVLAB_ALLOW_TF32 of this process, read once.
bool allow_tf32();
/// The mode for metadata: "fp32, tf32 off" or "tf32 allowed on the GPU (CONVLAB_ALLOW_TF32=1)".
std::string math_mode_description();

}  // namespace convlab
