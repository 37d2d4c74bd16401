#pragma once
// cpu.winograd internals: the options it plans the shared geometry with and the error bound of
// one variant as this executor runs it (the plan geometry and the bound's derivation are
// shared with cuda.winograd in strategy/winograd_geometry.hpp and strategy/winograd_host.hpp).
// Not a public header; the tests include it to check the layout and each variant's bound.

#include "convlab/accuracy.hpp"
#include "convlab/knobs.hpp"
#include "convlab/problem.hpp"
#include "cpu/im2col/gemm.hpp"
#include "strategy/winograd_geometry.hpp"

namespace convlab::winograd {

/// The WinogradOptions of resolved knobs on convlab::num_threads() threads: 2 MiB auto chunks
/// of at least kWinogradCpuMinChunk tiles and at most one chunk's share per thread, one cache
/// line (kWinogradCpuPointSkew) between the transform points' matrices, 64-byte alignment.
WinogradOptions cpu_winograd_options(const KnobValues& knobs);

/// The packing buffers one worker's per-point GEMMs take from the workspace (Eigen's: see
/// lib/cpu/im2col/gemm.hpp; empty for OpenBLAS), sized for the layout's chunk.
im2col::GemmScratch cpu_winograd_gemm_scratch(const WinogradLayout& layout, Pass pass);

/// The plan's layout: cpu_winograd_options' geometry with one GEMM scratch per worker placed
/// first, as the layout's library scratch.
WinogradLayout cpu_winograd_layout(const ConvProblem& problem, Pass pass, const KnobValues& knobs);

/// The normwise bound of F(m x m, 3 x 3) for (problem, pass) on convlab::num_threads()
/// threads (backward-filter sums one partial dU per thread).
ErrorBound cpu_winograd_error_bound(const ConvProblem& problem, Pass pass, int m);

}  // namespace convlab::winograd
