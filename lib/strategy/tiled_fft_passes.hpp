#pragma once
// The order of operations of a tiled FFT run, over any implementation of its steps:
// cpu.fft_tiled's (tiled_plan.cpp), cuda.fft_tiled's (the kernels and cuda.fft's plan) and
// the host emulation of cuda.fft_tiled in the tests (the kernels' per-element functions and
// cpu.fft's plan), so the tests run the sequence the GPU runs. Host code (a template, no
// CONVLAB_HD). See lib/cpu/fft_tiled/cpu_fft_tiled.cpp for the derivation.
//
// Ops provides, for a batch b:
//   gather_patches(b, x)   x patches into the patch buffer (forward, backward-filter)
//   gather_tiles(b, dy)    dy tiles into the tile buffer (backward-data, backward-filter)
//   scatter_tiles(b, y)    the tile buffer out into y (forward)
//   add_patches(b, dx)     dx += the patch buffer (backward-data)
//   zero(dx)               dx = 0 (backward-data, before the first batch)
//   run_fft(b, w_out)      the sub-problem's pass of cuda.fft / cpu.fft on the buffers, with
//                          w_out as the filter tensor (the output in backward-filter)
//   accumulate(dw)         dw += the partial buffer (backward-filter, batches after the first)
//   partial()              the partial buffer

#include "convlab/algorithm.hpp"
#include "strategy/tiled_fft_geometry.hpp"

namespace convlab {

template <class Ops>
void run_tiled_fft_pass(const TiledFftGeometry& g, Pass pass, const Tensors& t, Ops& ops) {
  if (pass == Pass::backward_data) ops.zero(t.x);
  for (int64_t i = 0; i < g.batches; ++i) {
    const TiledBatch b{i * g.batch, i + 1 == g.batches ? g.last_batch : g.batch};
    switch (pass) {
      case Pass::forward:
        ops.gather_patches(b, t.x);
        ops.run_fft(b, t.w);
        ops.scatter_tiles(b, t.y);
        break;
      case Pass::backward_data:
        ops.gather_tiles(b, t.y);
        ops.run_fft(b, t.w);
        ops.add_patches(b, t.x);
        break;
      case Pass::backward_filter:
        ops.gather_patches(b, t.x);
        ops.gather_tiles(b, t.y);
        if (i == 0) {  // the first batch writes dw, the others add theirs
          ops.run_fft(b, t.w);
        } else {
          ops.run_fft(b, ops.partial());
          ops.accumulate(t.w);
        }
        break;
    }
  }
}

}  // namespace convlab
