#include "convlab/error.hpp"

namespace convlab {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_problem: return "invalid_problem";
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::out_of_memory: return "out_of_memory";
    case ErrorCode::over_budget: return "over_budget";
    case ErrorCode::io: return "io";
    case ErrorCode::backend: return "backend";
  }
  return "unknown";
}

}  // namespace convlab
