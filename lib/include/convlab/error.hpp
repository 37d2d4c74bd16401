#pragma once
/// \file
/// convlab::Error, the one exception type of the library, and its codes.

#include <stdexcept>
#include <string>

namespace convlab {

/// What kind of failure an Error is. Invalid input and an unsupported (valid) problem are
/// kept apart so that a sweep can report the second as a disposition, not a failure.
enum class ErrorCode {
  invalid_problem,   ///< a ConvProblem that is not a convolution (bad sizes, overflow, ...)
  invalid_argument,  ///< any other bad input: a descriptor, a name, a flag value, a path
  unsupported,       ///< a valid problem this algorithm does not implement
  unavailable,       ///< the algorithm is compiled in but cannot run here (no CUDA device)
  out_of_memory,     ///< an allocation failed or would not fit the memory there is
  over_budget,       ///< the case does not fit the memory budget the caller set
  io,                ///< a file could not be read or written
  backend,           ///< a vendor library (cuFFT, cuDNN, FFTW, oneDNN, ...) reported a failure
};

/// The stable spelling of a code, as it appears in messages and CSV rows.
const char* to_string(ErrorCode code) noexcept;

/// The exception thrown by every convlab function. The message names the offending value.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace convlab
