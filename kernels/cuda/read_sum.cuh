// The device read test: the sum of a float buffer, read once, for the read roof the CUDA
// backend's probe (engine/bench/cuda_read_probe.cpp) measures beside each case. The spec is
// kernels/cpu/read_sum.h (read_sum_reference); what matters is how fast it reads.
// Deliberately not: a numerically careful sum (the value is only a sink for the loads).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmbench::cuda {

// Blocks the read kernel launches for n floats: enough to fill the device (a grid-stride loop
// covers the rest), at most kReadSumMaxBlocks.
inline constexpr int kReadSumMaxBlocks = 4096;
int read_sum_blocks(std::int64_t n);

// partial[b] = the sum of block b's grid-stride share of x[0, n), for b < read_sum_blocks(n);
// partial: that many device floats. x must be 16-byte aligned (cudaMalloc is); float4 loads,
// the tail of n % 4 elements read one by one. Their total equals read_sum_reference(x, n) up to
// float rounding.
void read_sum_partial(float* partial, const float* x, std::int64_t n, cudaStream_t stream);

}  // namespace llmbench::cuda
