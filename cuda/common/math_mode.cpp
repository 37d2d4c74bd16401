#include "math_mode.hpp"

namespace convlab::cuda {

std::string math_mode_name() { return allow_tf32() ? "tf32" : "fp32"; }

double math_mode_factor(double fp32_factor) { return math_mode_factor(fp32_factor, allow_tf32()); }

double math_mode_factor(double fp32_factor, bool tf32) {
  return tf32 ? fp32_factor * 8192.0 : fp32_factor;
}

}  // namespace convlab::cuda
