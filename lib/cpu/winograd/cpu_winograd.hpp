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

/// Backward-filter's auto chunk may hold V and P of up to cpu_winograd_gradient_chunk_percent()
/// hundredths of dU's bytes where dU is larger than kWinogradCpuGradientChunkMinFilterBytes
/// (WinogradOptions::gradient_chunk_filter_percent): each chunk's GEMMs read and write all of
/// dU, and with 2 MiB chunks of 64 tiles that traffic outweighed the chunk's own where dU leaves
/// the cache (9 MiB at 256 channels, 36 MiB at 512). On the AMD EPYC VM (Zen 4, 32 MiB of L3)
/// chunks of twice dU ran ResNet-50's 14x14 layer and VGG-16's conv3_2 to conv5_1 in 0.81-0.94
/// of the time at one thread, but VGG-16's conv3_1, whose dU of 4.5 MiB stays in cache between
/// chunks, in 1.10: the floor is 8 MiB, between the two. On the Intel Xeon VM (family 6 model
/// 167, 2 MiB of L2 per core) those large chunks lost: 256-channel layers ran fastest in
/// chunks of 64 tiles, 512-channel ones in about 128, both V and P of half dU's bytes
/// (docs/strategy-winograd.md, "Backward-filter's chunks on the Intel VM"). On the AMD EPYC
/// Zen 5 VM twice dU held: half of it lost on ResNet-50's 14x14 layer, AlexNet's conv3 and,
/// at two threads, VGG-16's conv4_1, and was even on the rest ("Both backward-filter rules on
/// the AMD EPYC Zen 5 VM").
inline constexpr int64_t kWinogradCpuGradientChunkMinFilterBytes = int64_t{8} << 20;
inline constexpr int64_t kWinogradCpuGradientChunkPercentAmd = 200;
inline constexpr int64_t kWinogradCpuGradientChunkPercentOther = 50;
/// kWinogradCpuGradientChunkPercentAmd on AMD CPUs, where it was measured to pay, else
/// kWinogradCpuGradientChunkPercentOther.
int64_t cpu_winograd_gradient_chunk_percent();

/// The whole U (alpha^2 Cd Cs floats) up to which auto keeps it whole, transformed once per
/// group; past it, where no worker runs more than one chunk, forward and backward-data
/// transform U in blocks of rows of at most kWinogradCpuFilterBlockBytes (rounded down to
/// whole register tiles of the GEMM), so that the GEMMs read it from cache instead of memory.
/// Each block re-reads the chunk's V: on the 7x7 layer (512 channels) blocks of 24-60 rows ran
/// 1.2-1.4x faster than blocks of 6 on the Intel Xeon VM, where on the AMD EPYC VM 6, 12 and
/// 24 rows were within the noise of each other (docs/strategy-winograd.md).
inline constexpr int64_t kWinogradCpuWholeFilterBytes = int64_t{4} << 20;
inline constexpr int64_t kWinogradCpuFilterBlockBytes = int64_t{3} << 20;

/// Forward's and backward-data's tiles up to this many are one chunk in filter blocks (the
/// layout's block_chunk_tiles) on one thread: two panels of the GEMM and one vector of rest.
/// With the auto chunk of 64, convnet-benchmarks' L5 (U of 20 MiB) at mb 8 to 16 (72 to 144
/// tiles) ran chunks of 64 and a rest, with U whole, written to memory and read back for each.
/// On the AMD EPYC VM (Zen 4), one thread, one chunk in blocks ran L5 forward at mb 8 to 14 in
/// 0.75-0.96 of the time and at mb 16 in 0.90-0.94, ResNet-50's 14x14 layer at mb 9 (144
/// tiles) in 0.93-0.96, VGG-16's conv5_1 and ResNet-50's 7x7 layer at 144 tiles in 0.98-1.03;
/// from 153 tiles it was even (0.95-1.08), from 162 it lost (1.07-1.27: each block re-reads
/// the chunk's V) (docs/strategy-winograd.md).
inline constexpr int64_t kWinogradCpuBlockChunkTiles = 144;
/// The same where two or more workers share the chunk: three panels. The auto chunks of 64 and
/// a rest then also leave a worker idle for part of the pass (three chunks over two workers).
/// On the same VM at two threads one chunk ran 144 to 192 tiles (L5, the 14x14 and 7x7 layers,
/// both passes) in 0.74-0.97 of the time but the 7x7 layer at 176 (1.01-1.07); from 196 tiles
/// it lost in 15 of 21 cases (1.04-1.45). Measured at two threads only: more workers take the
/// same bound.
inline constexpr int64_t kWinogradCpuSharedBlockChunkTiles = 192;
/// Backward-filter's tiles up to this many are one chunk in filter blocks where two or more
/// workers share it, on CPUs other than AMD: on the Intel Xeon VM (family 6 model 167) at two
/// threads, against the chunks of half dU, one per worker, that ran ResNet-50's 14x14 layer at
/// mb 12, VGG-16's conv5_1 at mb 9 and 12, ResNet-50's 7x7 layer at mb 36 and 48 and L5 at mb 9
/// and 16 in 0.82-0.98 of the time, ResNet-50's 14x14 layer at mb 9 in 1.01 and AlexNet's conv3
/// at mb 12 in 1.06; at one thread it lost on the 256-channel layers (1.09-1.11), so one thread
/// keeps the chunks (docs/strategy-winograd.md). Not measured on AMD CPUs.
inline constexpr int64_t kWinogradCpuSharedGradientChunkTiles = 192;
/// The layout's block_chunk_tiles for `pass` on `workers` threads: the constants above.
int64_t cpu_winograd_block_chunk_tiles(Pass pass, int64_t workers);

/// Backward-filter's gradient transform writes P, the chunk's alpha^2 Kg x chunk products, with
/// non-temporal stores where P is larger than this (TileRun::stream_points; knob
/// `gradient_stores`): a P that leaves the cache before the GEMMs read it back otherwise costs
/// each line a read from memory before its write. On the AMD EPYC VM (Zen 4, 1 MiB of L2, 32
/// MiB of L3), one thread, the layers with P of 4.5-28 MiB (ResNet-50's 14x14 and 7x7, VGG-16's
/// conv3_2 to conv5_1, AlexNet's conv3, L5 at mb 16) ran in 0.93-0.99 of the time, their speed
/// against oneDNN's Winograd up in each; streamed as well, the layers whose 2 MiB chunks keep P
/// (0.6-2.3 MiB) in cache ran in 1.05-1.08 (docs/strategy-winograd.md).
inline constexpr int64_t kWinogradCpuStreamedGradientBytes = int64_t{4} << 20;
/// Whether the plan of (pass, layout) streams P's stores: the knob `gradient_stores`, or with
/// auto, backward-filter past the bound above.
bool cpu_winograd_streams_gradient(Pass pass, const WinogradLayout& layout,
                                   const KnobValues& knobs);

/// The `filter_rows` option of the layout: the knob's value, or auto's choice (0 = whole).
/// `whole` is the layout with U whole: forward and backward-data take blocks only where no
/// worker runs more than one chunk of it, or where its tiles are at most
/// cpu_winograd_block_chunk_tiles(pass, its workers). Backward-filter's layout takes blocks only
/// when the tiles are one chunk.
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
