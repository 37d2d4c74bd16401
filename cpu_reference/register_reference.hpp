#pragma once
/// \file
/// The reference's one registration entry: adds the `reference` algorithm.

#include "convlab/registry.hpp"

namespace convlab {

void register_reference(Registry& registry);

}  // namespace convlab
