#pragma once
// Guard bands around a case's buffers, to catch out-of-bounds writes: each of x, w, y and the
// workspace is allocated with kGuardBytes of a pseudo-random byte pattern right before and
// right after it (no gap: a write one element past the end lands in the back guard), and
// check() reads every guard back and names the first damaged byte. Written against the
// DeviceContext interface, so the same code runs on a GPU context and, in the host test,
// on host_context() with a deliberately injected off-by-one write.
//
// The front guard is 256 bytes, so each payload keeps the 256-byte alignment cudaMalloc gives.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"

namespace convlab::testing {

constexpr std::size_t kGuardBytes = 256;

/// The guard pattern of one band: bytes of a splitmix64 stream seeded by `salt`, so that no
/// constant fill (0, 0xFF NaN) and no value copied from a neighbouring band leaves it intact.
inline std::vector<unsigned char> guard_pattern(std::uint64_t salt) {
  std::vector<unsigned char> bytes(kGuardBytes);
  std::uint64_t z = salt * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    z += 0x9E3779B97F4A7C15ull;
    std::uint64_t v = z;
    v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
    v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
    v ^= v >> 31;
    for (std::size_t b = 0; b < 8 && i + b < bytes.size(); ++b) bytes[i + b] = (v >> (8 * b)) & 0xFF;
  }
  return bytes;
}

/// "" when `seen` equals `expected`, else where and how many bytes differ.
inline std::string compare_guard(const std::vector<unsigned char>& seen,
                                 const std::vector<unsigned char>& expected,
                                 const std::string& where) {
  std::size_t first = seen.size(), bad = 0;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] == expected[i]) continue;
    if (bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  return where + ": " + std::to_string(bad) + " of " + std::to_string(seen.size()) +
         " guard bytes overwritten, the first at guard byte " + std::to_string(first);
}

/// One payload of `bytes` between two guard bands, allocated on `context`.
class GuardedBuffer {
 public:
  GuardedBuffer(DeviceContext& context, std::size_t bytes, std::uint64_t salt, std::string name)
      : context_(&context),
        bytes_(bytes),
        name_(std::move(name)),
        front_(guard_pattern(2 * salt)),
        back_(guard_pattern(2 * salt + 1)),
        block_(context, kGuardBytes + bytes + kGuardBytes) {
    context.copy_to_device(base(), front_.data(), kGuardBytes);
    context.copy_to_device(base() + kGuardBytes + bytes, back_.data(), kGuardBytes);
  }
  void* data() const { return base() + kGuardBytes; }
  float* floats() const { return static_cast<float*>(data()); }
  std::size_t bytes() const { return bytes_; }
  /// Both bands as written, or a message naming the buffer, the band and the first bad byte.
  std::string check() const {
    std::vector<unsigned char> seen(kGuardBytes);
    context_->synchronize();
    context_->copy_to_host(seen.data(), base(), kGuardBytes);
    std::string damage = compare_guard(seen, front_, name_ + " front guard (before byte 0)");
    context_->copy_to_host(seen.data(), base() + kGuardBytes + bytes_, kGuardBytes);
    const std::string back = compare_guard(
        seen, back_, name_ + " back guard (from byte " + std::to_string(bytes_) + ")");
    if (!back.empty()) damage += (damage.empty() ? "" : "; ") + back;
    return damage;
  }

 private:
  unsigned char* base() const { return static_cast<unsigned char*>(block_.data()); }
  DeviceContext* context_;
  std::size_t bytes_;
  std::string name_;
  std::vector<unsigned char> front_, back_;
  DeviceBuffer block_;
};

/// A case's x, w, y (uploaded from `host`) and workspace (filled with 0xFF, a NaN pattern),
/// each between guard bands.
class GuardedCase {
 public:
  GuardedCase(DeviceContext& context, const HostTensors& host, std::size_t workspace_bytes)
      : x_(upload(context, host.x, 1, "x")),
        w_(upload(context, host.w, 2, "w")),
        y_(upload(context, host.y, 3, "y")),
        workspace_(context, workspace_bytes, 4, "workspace") {
    context.fill_bytes(workspace_.data(), 0xFF, workspace_bytes);
    context.synchronize();
  }
  Tensors tensors() const { return {x_.floats(), w_.floats(), y_.floats()}; }
  /// A zero-byte workspace is {nullptr, 0}, as CaseBuffers gives it.
  Workspace workspace() const {
    return {workspace_.bytes() ? workspace_.data() : nullptr, workspace_.bytes()};
  }
  /// "" when every band is intact, else each damaged band.
  std::string check() const {
    std::string all;
    for (const GuardedBuffer* b : {&x_, &w_, &y_, &workspace_}) {
      const std::string damage = b->check();
      if (!damage.empty()) all += (all.empty() ? "" : "; ") + damage;
    }
    return all;
  }
  /// The allocation beyond the payloads: two bands per buffer.
  static constexpr std::size_t overhead_bytes() { return 4 * 2 * kGuardBytes; }

 private:
  static GuardedBuffer upload(DeviceContext& context, const std::vector<float>& data,
                              std::uint64_t salt, const char* name) {
    GuardedBuffer b(context, data.size() * sizeof(float), salt, name);
    context.copy_to_device(b.data(), data.data(), b.bytes());
    return b;
  }
  GuardedBuffer x_, w_, y_, workspace_;
};

}  // namespace convlab::testing
