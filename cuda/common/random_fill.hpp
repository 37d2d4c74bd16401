#pragma once
// Random device data for timing: measurements on zero-filled buffers are optimistic (a
// current GPU's power draw, and so its clocks, depend on the bits it moves and multiplies).
// CUDA-free header.

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace convlab::cuda {

/// Fills `count` floats at `device_data` with values uniform in [-1, 1) from a counter-based
/// hash of (seed, index), on `stream`; asynchronous. A launch error throws
/// convlab::Error with the CUDA status.
void fill_uniform(float* device_data, std::size_t count, std::uint64_t seed, CUstream_st* stream);

/// The same for a byte buffer: its whole 4-byte words get floats, a tail shorter than a float
/// keeps its bytes.
void fill_uniform_bytes(void* device_data, std::size_t bytes, std::uint64_t seed,
                        CUstream_st* stream);

}  // namespace convlab::cuda
