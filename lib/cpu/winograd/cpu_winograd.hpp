#pragma once
// cpu.winograd internals: the options it plans the shared geometry with and the error bound of
// one variant as this executor runs it (the plan geometry and the bound's derivation are
// shared with cuda.winograd in strategy/winograd_geometry.hpp and strategy/winograd_host.hpp).
// Not a public header; the tests include it to check the layout and each variant's bound.

#include "convlab/accuracy.hpp"
#include "convlab/knobs.hpp"
#include "convlab/problem.hpp"
#include "strategy/winograd_geometry.hpp"

namespace convlab::winograd {

/// The WinogradOptions of resolved knobs on convlab::num_threads() threads: 2 MiB auto chunks
/// of at least kWinogradCpuMinChunk tiles and at most one chunk's share per thread, one cache
/// line (kWinogradCpuPointSkew) between the transform points' matrices, 64-byte alignment.
WinogradOptions cpu_winograd_options(const KnobValues& knobs);

/// Backward-filter's auto chunk may hold V and P of up to kWinogradCpuGradientChunkPerFilter
/// times dU's bytes where dU is larger than kWinogradCpuGradientChunkMinFilterBytes
/// (WinogradOptions::gradient_chunk_per_filter): each chunk's GEMMs read and write all of dU,
/// and with 2 MiB chunks of 64 tiles that traffic outweighed the chunk's own where dU leaves
/// the cache (9 MiB at 256 channels, 36 MiB at 512). On the AMD EPYC VM (32 MiB of L3) chunks
/// of twice dU ran ResNet-50's 14x14 layer and VGG-16's conv3_2 to conv5_1 in 0.81-0.94 of the
/// time at one thread, but VGG-16's conv3_1, whose dU of 4.5 MiB stays in cache between
/// chunks, in 1.10 (docs/strategy-winograd.md): the floor is 8 MiB, between the two.
inline constexpr int64_t kWinogradCpuGradientChunkPerFilter = 2;
inline constexpr int64_t kWinogradCpuGradientChunkMinFilterBytes = int64_t{8} << 20;

/// The whole U (alpha^2 Cd Cs floats) up to which auto keeps it whole, transformed once per
/// group; past it, where no worker runs more than one chunk, forward and backward-data
/// transform U in blocks of rows of at most kWinogradCpuFilterBlockBytes (rounded down to
/// whole register tiles of the GEMM), so that the GEMMs read it from cache instead of memory.
/// Each block re-reads the chunk's V: on the 7x7 layer (512 channels) blocks of 24-60 rows ran
/// 1.2-1.4x faster than blocks of 6 on the Intel Xeon VM, where on the AMD EPYC VM 6, 12 and
/// 24 rows were within the noise of each other (docs/strategy-winograd.md).
inline constexpr int64_t kWinogradCpuWholeFilterBytes = int64_t{4} << 20;
inline constexpr int64_t kWinogradCpuFilterBlockBytes = int64_t{3} << 20;

/// Forward's tiles up to this many are one chunk in filter blocks (the layout's
/// block_chunk_tiles): two panels of the GEMM. With the auto chunk of 64, convnet-benchmarks'
/// L5 (U of 20 MiB) at mb 8 to 14 (72 to 126 tiles) ran a chunk of 64 and a rest, with U
/// whole, written to memory and read back for each. On the AMD EPYC VM (Zen 4), one chunk in
/// blocks ran in 0.75-0.96 of the time at one thread, VGG-16's conv4 layers at mb 2 (98 tiles)
/// in 0.82-0.84, ResNet-50's 14x14 and VGG-16's conv5_1 at mb 8 (128 tiles) in 0.89-0.98; at
/// two threads L5, the 14x14 layer and conv5_1 at mb 8 in 0.79-0.96. One chunk of 144 tiles
/// gained nothing (1.03), of 256 lost 4 % and 20 % (each block re-reads the chunk's V).
inline constexpr int64_t kWinogradCpuForwardBlockChunkTiles = 128;
/// Backward-data's: fewer than two whole chunks. With a short rest (L5 at mb 5 to 7, 80 to
/// 112 tiles; VGG-16's conv4 layers at mb 2, 98) one chunk in blocks ran in 0.76-0.88 of the
/// time at one thread; at exactly two chunks of 64 (128 tiles: L5, the 14x14 layer and conv5_1
/// at mb 8) in 1.02-1.07 (docs/strategy-winograd.md).
inline constexpr int64_t kWinogradCpuBackwardDataBlockChunkTiles = 2 * kWinogradCpuMinChunk - 1;
/// The layout's block_chunk_tiles for `pass`: the constants above, 0 for backward-filter.
int64_t cpu_winograd_block_chunk_tiles(Pass pass);

/// The `filter_rows` option of the layout: the knob's value, or auto's choice (0 = whole).
/// `whole` is the layout with U whole: forward and backward-data take blocks only where no
/// worker runs more than one chunk of it, or where its tiles are at most
/// cpu_winograd_block_chunk_tiles(pass). Backward-filter's layout takes blocks only when the
/// tiles are one chunk.
int64_t cpu_winograd_filter_rows(const ConvProblem& problem, Pass pass, const KnobValues& knobs,
                                 int m, const WinogradLayout& whole);

/// Backward-filter transforms the input of kStagingChannels channels of one run of tiles into
/// a staging buffer and transposes it from there into V's place, tiles x Cs per point (the
/// unpacked GEMM's B operand). Floats from one point of that buffer to the next,
/// kStagingChannels kMaxRunTiles + kWinogradCpuPointSkew; 0 for the other passes. One worker's
/// buffer is alpha^2 of them, in the layout's library scratch.
inline constexpr int64_t kStagingChannels = 16;
int64_t cpu_winograd_staging_point(Pass pass);

/// The plan's layout: cpu_winograd_options' geometry with one staging buffer per worker
/// (backward-filter) placed first, as the layout's library scratch.
WinogradLayout cpu_winograd_layout(const ConvProblem& problem, Pass pass, const KnobValues& knobs);

/// The normwise bound of F(m x m, 3 x 3) for (problem, pass) on convlab::num_threads()
/// threads (backward-filter sums one partial dU per thread).
ErrorBound cpu_winograd_error_bound(const ConvProblem& problem, Pass pass, int m);

}  // namespace convlab::winograd
