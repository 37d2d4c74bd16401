#pragma once
// cpu.winograd internals: the error bound of one variant as this executor runs it (the plan
// geometry and the bound's derivation are shared with cuda.winograd in
// strategy/winograd_geometry.hpp and strategy/winograd_host.hpp). Not a public header; the
// tests include it to check each variant against its own bound.

#include "convlab/accuracy.hpp"
#include "convlab/problem.hpp"

namespace convlab::winograd {

/// The normwise bound of F(m x m, 3 x 3) for (problem, pass) on convlab::num_threads()
/// threads (backward-filter sums one partial dU per thread).
ErrorBound cpu_winograd_error_bound(const ConvProblem& problem, Pass pass, int m);

}  // namespace convlab::winograd
