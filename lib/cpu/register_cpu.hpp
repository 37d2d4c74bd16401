#pragma once
/// \file
/// The CPU backends' one public entry: registers those this build has (cpu.im2col always,
/// cpu.fft with FFTW, cpu.onednn with oneDNN) and names the others as missing with why.

#include "convlab/registry.hpp"

namespace convlab {

void register_cpu(Registry& registry);

}  // namespace convlab
