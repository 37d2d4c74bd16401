#pragma once
// One CUDA graph per pass (graph_cache.hpp decides when it is captured, updated, replayed or
// bypassed). Capture and instantiation allocate graph objects, so the first run for a key is
// not allocation-free; replays are, and a run inside the caller's own capture issues its
// launches straight into the caller's graph. CUDA-free header.

#include <functional>

#include "graph_cache.hpp"

struct CUstream_st;
struct CUgraphExec_st;

namespace convlab::cuda {

class PassGraph {
 public:
  explicit PassGraph(bool enabled) : cache_(enabled) {}
  ~PassGraph();
  PassGraph(const PassGraph&) = delete;
  PassGraph& operator=(const PassGraph&) = delete;

  /// Runs `issue` (which puts the pass's launches on `stream`) as the step for `key` says:
  /// directly, or captured into the plan's executable graph and launched from it.
  void run(const GraphKey& key, CUstream_st* stream, const std::function<void()>& issue);
  bool enabled() const { return cache_.enabled(); }

 private:
  void drop();
  GraphCache cache_;
  CUgraphExec_st* exec_ = nullptr;
};

}  // namespace convlab::cuda
