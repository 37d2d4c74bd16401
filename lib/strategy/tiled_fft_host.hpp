// What every tiled-FFT algorithm does on the host the same way, whatever runs its FFTs: the
// knobs (tile edge, batch of (image, tile) pairs) read into the TiledFftOptions that
// tiled_fft_geometry() takes, and the PlanInfo a plan reports. Never compiled for a device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/knobs.hpp"
#include "strategy/tiled_fft_geometry.hpp"

namespace convlab {

inline std::vector<KnobSpec> tiled_fft_knobs() {
  return {KnobSpec{"tile",
                   KnobType::integer,
                   "auto",
                   {},
                   1,
                   int64_t{1} << 30,
                   true,
                   "",
                   "outputs per tile edge (capped by the output size); auto: the patch is the "
                   "even 2,3,5,7-smooth size >= 4 dilated kernels"},
          KnobSpec{"batch",
                   KnobType::integer,
                   "auto",
                   {},
                   1,
                   int64_t{1} << 40,
                   true,
                   "",
                   "(image, tile) pairs per FFT run (bounds the spectra); auto: their spectra "
                   "about the filter's (up to 4x within 8 MiB), at least 8"}};
}

// Unset knobs stay 0, which tiled_fft_geometry() reads as "choose from the problem".
inline TiledFftOptions tiled_fft_options(const KnobValues& knobs) {
  TiledFftOptions o;
  o.tile = knob_integer(knobs, "tile").value_or(0);
  o.batch = knob_integer(knobs, "batch").value_or(0);
  return o;
}

// The plan info of a tiled plan whose sub-problem's FFT plan reported `sub` and that needs
// `workspace` bytes in all. The split sums to `workspace`: the alignment gaps go to the
// buffer after them. An executor appends its own details after these.
inline void describe_tiled_fft_plan(const TiledFftGeometry& g, const PlanInfo& sub,
                                    std::size_t workspace, PlanInfo& info) {
  info.kernel = sub.kernel;
  info.transform = sub.transform;
  info.tile = std::to_string(g.h.tile) + "x" + std::to_string(g.w.tile);
  info.workspace_split = {{"patches", static_cast<std::size_t>(g.patches.bytes)},
                          {"tiles", static_cast<std::size_t>(g.tiles_buffer.bytes)},
                          {"partial", static_cast<std::size_t>(g.partial.bytes)},
                          {"fft", static_cast<std::size_t>(g.fft.bytes)}};
  std::size_t placed = 0;
  for (const auto& part : info.workspace_split) placed += part.second;
  info.workspace_split.back().second += workspace - placed;
  info.details = {{"tiles", std::to_string(g.h.tiles) + "x" + std::to_string(g.w.tiles)},
                  {"patch", std::to_string(g.h.patch) + "x" + std::to_string(g.w.patch)},
                  {"batch_pairs", std::to_string(g.batch)},
                  {"batches", std::to_string(g.batches)}};
}

}  // namespace convlab
