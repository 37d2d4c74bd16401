#pragma once
// CONVLAB_HD marks functions of the shared strategy math that both host code and CUDA
// kernels call. Headers in lib/strategy/ use no STL containers and no exceptions in such
// functions, so nvcc can compile them for the device.

#if defined(__CUDACC__)
#define CONVLAB_HD __host__ __device__ __forceinline__
#else
#define CONVLAB_HD inline
#endif
