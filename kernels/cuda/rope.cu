// RoPE on the GPU: one block per row. The block first computes cos/sin of each pair's angle once
// into shared memory, then rotates every (head, pair) of the row with them, as the CPU reference
// does with its per-row table.
// The angle is computed in double on the device (pow, cos, sin in double, then rounded to float)
// with the same shared functions as the host (kernels/common/op_math.h), rather than with a float
// approximation: a position of 30000 times a frequency near 1 is an angle whose float rounding
// alone moves cos/sin by ~1e-3. Double costs one pow and one sincos per pair per row, a few
// microseconds at most even on GPUs with slow fp64, against a kernel that moves the whole row.
// CUDA's double pow/cos/sin are within 1-2 ulp of glibc's, so cos/sin match the CPU's float
// values or differ by one float ulp in rare rounding ties.
// Deliberately not: a cached cos/sin table across calls, or the interleaved (GPT-J) layout.
#include "kernels/cuda/rope.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"

namespace llmbench::cuda {

namespace {

// 1024 threads: a decode row of 32 heads x 64 pairs is two rounds, not sixteen.
constexpr int kThreads = 1024;

// Dynamic shared memory: cos of the half pairs, then their sin.
__global__ void rope_kernel(float* x, int row_stride, int n_heads, int head_dim,
                            const int32_t* positions, float theta) {
  extern __shared__ float table[];
  const int half = head_dim / 2;
  float* cos_i = table;
  float* sin_i = table + half;
  const int32_t position = positions[blockIdx.x];
  for (int i = threadIdx.x; i < half; i += blockDim.x)
    rope_cos_sin(position, rope_inv_freq(i, head_dim, theta), &cos_i[i], &sin_i[i]);
  __syncthreads();

  float* row = x + static_cast<std::size_t>(blockIdx.x) * row_stride;
  const int n_pairs = n_heads * half;
  for (int p = threadIdx.x; p < n_pairs; p += blockDim.x) {
    const int h = p / half, i = p % half;
    float* lo = row + static_cast<std::size_t>(h) * head_dim + i;
    rope_rotate_pair(lo, lo + half, cos_i[i], sin_i[i]);
  }
}

}  // namespace

void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
          const int32_t* positions, float theta, cudaStream_t stream) {
  const int half = head_dim / 2;
  if (n_rows <= 0 || n_heads <= 0 || half <= 0) return;
  const std::size_t shared_bytes = 2 * static_cast<std::size_t>(half) * sizeof(float);
  rope_kernel<<<n_rows, kThreads, shared_bytes, stream>>>(x, row_stride, n_heads, head_dim,
                                                          positions, theta);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
