#pragma once
// When a plan replays its pass as one CUDA graph instead of issuing the launches one by one.
// A captured graph bakes in every pointer and the stream's ordering, so it may be replayed
// only for the same key: the stream and every tensor and workspace pointer, and the variant
// of the launch sequence (cuda.fft's reused filter spectra leave launches out). The first
// run for a key captures the pass; a later run with another key captures again and updates
// the executable graph in place (cudaGraphExecUpdate; re-instantiated where the update is
// refused); a run while the caller is capturing its own stream issues the launches as they
// are, into the caller's graph (a capture cannot nest). CUDA-free, host-tested; the plan
// does the CUDA calls.

#include <cstdint>

namespace convlab::cuda {

/// Everything a captured pass depends on.
struct GraphKey {
  const void* stream = nullptr;
  const void* x = nullptr;
  const void* w = nullptr;
  const void* y = nullptr;
  const void* workspace = nullptr;
  int variant = 0;
  bool operator==(const GraphKey& o) const {
    return stream == o.stream && x == o.x && w == o.w && y == o.y && workspace == o.workspace &&
           variant == o.variant;
  }
  bool operator!=(const GraphKey& o) const { return !(*this == o); }
};

enum class GraphStep {
  direct,   ///< issue the launches (graphs off, or the caller is capturing the stream)
  capture,  ///< no executable graph yet: capture the pass, instantiate, launch
  update,   ///< the key changed: capture again, update the executable graph, launch
  replay,   ///< the key is the captured one: launch the executable graph
};

inline const char* to_string(GraphStep s) {
  return s == GraphStep::direct    ? "direct"
         : s == GraphStep::capture ? "capture"
         : s == GraphStep::update  ? "update"
                                   : "replay";
}

/// The key of the executable graph a plan holds, if any.
class GraphCache {
 public:
  explicit GraphCache(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  /// What the run with `key` does; `caller_capturing` is whether the run's stream is being
  /// captured by the caller.
  GraphStep next(const GraphKey& key, bool caller_capturing) const {
    if (!enabled_ || caller_capturing) return GraphStep::direct;
    if (!held_) return GraphStep::capture;
    return key == key_ ? GraphStep::replay : GraphStep::update;
  }
  /// The executable graph now replays `key`'s pass.
  void captured(const GraphKey& key) { key_ = key, held_ = true; }
  /// The executable graph is gone or unusable (a capture or launch that failed half way).
  void forget() { held_ = false; }
  bool holds() const { return held_; }

 private:
  bool enabled_ = false;
  bool held_ = false;
  GraphKey key_;
};

}  // namespace convlab::cuda
