#pragma once
/// \file
/// The library's thread count, shared by every CPU backend (FFTW, Eigen, BLAS, oneDNN) so
/// that no two levels of parallelism oversubscribe the cores.

namespace convlab {

/// Threads the CPU algorithms use: set_num_threads() if called, else the environment
/// variable CONVLAB_NUM_THREADS, else every hardware thread.
int num_threads();
/// Sets the thread count for plans made and runs started from now on; n >= 1, else
/// Error{invalid_argument}.
void set_num_threads(int n);

}  // namespace convlab
