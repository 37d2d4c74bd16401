#pragma once
// Carving one caller-provided workspace into the buffers of a plan. The layout is computed
// at plan time (so workspace_bytes() is exact) and replayed at run time on the pointer the
// caller passes. Every buffer starts on a 256-byte boundary: cudaMalloc's alignment, which
// cuFFT, cuBLAS and cuDNN expect of their work areas and vectorised kernels rely on.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convlab/error.hpp"

namespace convlab::cuda {

inline constexpr std::size_t kWorkspaceAlignment = 256;

class WorkspaceLayout {
 public:
  /// Reserves `bytes` (0 is allowed and takes no space); returns the buffer's slot. Throws
  /// Error{out_of_memory} if the total would overflow size_t; `what` names the buffer.
  int add(std::size_t bytes, const char* what) {
    const std::size_t offset = round_up(end_);
    if (offset < end_ || offset + bytes < offset) {
      throw Error(ErrorCode::out_of_memory,
                  std::string("workspace overflows size_t at buffer '") + what + "'");
    }
    offsets_.push_back(offset);
    sizes_.push_back(bytes);
    end_ = offset + bytes;
    return static_cast<int>(offsets_.size()) - 1;
  }
  /// The whole workspace: the end of the last buffer (not rounded).
  std::size_t bytes() const { return end_; }
  std::size_t offset(int slot) const { return offsets_.at(static_cast<std::size_t>(slot)); }
  std::size_t size(int slot) const { return sizes_.at(static_cast<std::size_t>(slot)); }
  /// The buffer of `slot` inside the workspace at `base` (nullptr for an empty buffer).
  template <typename T>
  T* at(void* base, int slot) const {
    if (size(slot) == 0) return nullptr;
    return reinterpret_cast<T*>(static_cast<unsigned char*>(base) + offset(slot));
  }

  static std::size_t round_up(std::size_t bytes) {
    return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  }

 private:
  std::vector<std::size_t> offsets_, sizes_;
  std::size_t end_ = 0;
};

}  // namespace convlab::cuda
