#pragma once
// The boundary between Python arrays and convlab's raw pointers: every check a caller's
// array must pass (kind, dtype, shape, contiguity, writability, device) is made here, with a
// message naming the argument and the bad value, before a pointer reaches a plan.

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace convlab::python {

namespace py = pybind11;

/// Where an algorithm wants its arrays: host memory (NumPy) or CUDA memory
/// (__cuda_array_interface__: torch CUDA tensors, CuPy, Numba, ...).
enum class Memory { host, cuda };

/// A checked array: its first byte and its size. Shares the caller's memory, never a copy.
struct ArrayView {
  void* data = nullptr;
  std::size_t bytes = 0;
  /// The CUDA stream the producer named in __cuda_array_interface__ (1: legacy default,
  /// 2: per-thread default, else a cudaStream_t); unset when it named none.
  std::optional<std::uintptr_t> stream;
};

/// What an argument must be.
struct ArraySpec {
  std::string name;            ///< "x", "w", "y", "workspace": the argument's name in messages
  std::string algorithm;       ///< for messages: whose argument it is
  std::string problem;         ///< for messages: the descriptor the shape comes from
  std::vector<int64_t> shape;  ///< float32 tensors: the exact shape; empty for the workspace
  std::size_t min_bytes = 0;   ///< the workspace: at least this many bytes, any dtype
  bool writable = false;       ///< an output or the workspace
  Memory memory = Memory::host;
};

/// Checks `object` against `spec` and returns its memory. Throws convlab::Error
/// {invalid_argument} naming spec.name and what is wrong (type, dtype, shape, strides,
/// read-only, host vs CUDA memory).
ArrayView check_array(const py::handle& object, const ArraySpec& spec);

/// "(2, 3, 5, 5)", as Python prints a shape.
std::string format_shape(const std::vector<int64_t>& shape);

}  // namespace convlab::python
