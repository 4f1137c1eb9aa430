// Embedding lookup on the GPU: a row gather, which is what gather_rows (elementwise.cu) already
// does; this file exists so that the op has its own name and place, like its CPU counterpart.
// Deliberately not: bounds-checked (the engine validates token ids once per prompt).
#include "kernels/cuda/embedding.cuh"

#include <cstddef>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/elementwise.cuh"

namespace llmbench::cuda {

namespace {

__device__ inline float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float widen(__half v) { return __half2float(v); }

// One grid-stride loop over the n_tokens * dim output values.
template <typename T>
__global__ void embedding_widen_kernel(float* out, const T* table, const int32_t* tokens,
                                       int n_tokens, int dim) {
  const std::size_t n = std::size_t(n_tokens) * dim, step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += step) {
    const std::size_t row = i / dim, col = i % dim;
    out[i] = widen(table[std::size_t(tokens[row]) * dim + col]);
  }
}

template <typename T>
void launch_embedding_widen(float* out, const T* table, const int32_t* tokens, int n_tokens,
                            int dim, cudaStream_t stream) {
  const std::size_t n = std::size_t(n_tokens) * dim;
  if (n == 0) return;
  embedding_widen_kernel<<<detail::flat_blocks(n), detail::kFlatThreads, 0, stream>>>(
      out, table, tokens, n_tokens, dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace

void embedding(float* out, const float* table, const int32_t* tokens, int n_tokens, int dim,
               cudaStream_t stream) {
  gather_rows(out, table, tokens, n_tokens, dim, stream);
}

void embedding_bf16(float* out, const __nv_bfloat16* table, const int32_t* tokens, int n_tokens,
                    int dim, cudaStream_t stream) {
  launch_embedding_widen(out, table, tokens, n_tokens, dim, stream);
}

void embedding_f16(float* out, const __half* table, const int32_t* tokens, int n_tokens, int dim,
                   cudaStream_t stream) {
  launch_embedding_widen(out, table, tokens, n_tokens, dim, stream);
}

}  // namespace llmbench::cuda
