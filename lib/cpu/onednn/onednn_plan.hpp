#pragma once
// cpu.onednn internals: the primitive descriptors of a pass and the plan that runs them.
// Only onednn_algorithm.cpp includes this header.

#include <dnnl.hpp>
#include <memory>
#include <string>

#include "convlab/algorithm.hpp"

namespace convlab::onednn {

/// Sets the OpenMP thread count (the ICV oneDNN's OpenMP runtime reads through
/// omp_get_max_threads) for the lifetime of the scope and restores the caller's value after,
/// so that a plan made or run here neither inherits nor leaks another thread count.
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_;
};

/// The one CPU engine every plan shares (engines are thread-safe and cheap to share).
const dnnl::engine& cpu_engine();

/// The convolution primitive descriptor of a pass: format_tag::any on every tensor, the
/// given algorithm (convolution_auto, _direct or _winograd), prop_kind::forward_training (also as
/// the hint of the backward passes), scratchpad_mode::user. Must be called inside a ThreadScope:
/// oneDNN fixes its work split, and with it the scratchpad size, for the thread count current at
/// creation. Throws Error{backend} with oneDNN's status name when no implementation accepts the
/// problem.
dnnl::primitive_desc convolution_descriptor(const ConvProblem& problem, Pass pass,
                                            dnnl::algorithm algorithm);

/// Whether the implementation oneDNN picked is a Winograd one (its name contains "wino").
bool is_winograd(const dnnl::primitive_desc& descriptor);

/// Plans the pass with the thread count convlab::num_threads() gives now; the plan runs with
/// that count whatever the setting is later (oneDNN's scratchpad is sized for it). `name` is
/// the registry name, for messages.
std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass, dnnl::algorithm algorithm,
                                const std::string& name);

/// Converts a dnnl::error into convlab::Error{backend}, naming where and oneDNN's status.
[[noreturn]] void throw_backend(const dnnl::error& error, const std::string& where);
/// oneDNN's name of an algorithm: "convolution_auto", "convolution_direct", ...
const char* algorithm_name(dnnl::algorithm algorithm);

}  // namespace convlab::onednn
