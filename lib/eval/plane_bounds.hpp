#pragma once
// Private to convlab::eval: the per-plane factor of the normwise error bound, shared by the
// full and the sampled comparison.

#include <vector>

#include "convlab/accuracy.hpp"

namespace convlab {

/// The normwise bound of each output plane of `pass` (before factor * eps * log2 size): the
/// sum over the reduced channel of the products of the input planes' 2-norms. Planes in
/// output order: (n, k) forward, (n, c) backward-data, (k, c') backward-filter.
std::vector<double> normwise_plane_bounds(const ConvProblem& p, Pass pass, const HostTensors& t);

}  // namespace convlab
