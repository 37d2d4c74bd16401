#include "convlab/numerics.hpp"

#include <cstring>

#include "convlab/error.hpp"
#include "convlab/knobs.hpp"

namespace convlab {

bool parse_allow_tf32(const char* value) {
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0) return false;
  if (std::strcmp(value, "1") == 0) return true;
  throw Error(ErrorCode::invalid_argument,
              std::string("CONVLAB_ALLOW_TF32='") + value + "': expected 0 or 1");
}

bool allow_tf32() {
  static const bool allowed = [] {
    const auto env = environment_default("CONVLAB_ALLOW_TF32");
    return parse_allow_tf32(env ? env->c_str() : nullptr);
  }();
  return allowed;
}

std::string math_mode_description() {
  return allow_tf32() ? "tf32 allowed on the GPU (CONVLAB_ALLOW_TF32=1)" : "fp32, tf32 off";
}

}  // namespace convlab
