// LLMBENCH_HD marks a function callable from host and device code: `__host__ __device__` under
// nvcc, nothing under a plain C++ compiler. Only for the small shared math in kernels/common.
#pragma once

#if defined(__CUDACC__)
#define LLMBENCH_HD __host__ __device__
#else
#define LLMBENCH_HD
#endif
