#pragma once
/// \file
/// The CPU backends' one public entry: registers those this build has (cpu.im2col and
/// cpu.winograd always, cpu.fft and cpu.fft_tiled with FFTW, cpu.onednn* with oneDNN) and
/// names the others as missing with why.

#include "convlab/registry.hpp"

namespace convlab {

void register_cpu(Registry& registry);

}  // namespace convlab
