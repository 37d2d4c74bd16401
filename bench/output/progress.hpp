#pragma once
// The progress line of a sweep on stderr.

#include <cstddef>
#include <memory>

#include "output/reporters.hpp"

namespace convbench {

/// A progress line on stderr, rewritten in place: case i/n, layer, pass, algorithm,
/// elapsed, estimated remaining. Only made when stderr is a terminal.
std::unique_ptr<Reporter> make_progress_reporter(std::size_t cases);

}  // namespace convbench
