// Embedding lookup on the GPU: a row gather, which is what gather_rows (elementwise.cu) already
// does; this file exists so that the op has its own name and place, like its CPU counterpart.
// Deliberately not: bounds-checked (the engine validates token ids once per prompt).
#include "kernels/cuda/embedding.cuh"

#include "kernels/cuda/elementwise.cuh"

namespace llmbench::cuda {

void embedding(float* out, const float* table, const int32_t* tokens, int n_tokens, int dim,
               cudaStream_t stream) {
  gather_rows(out, table, tokens, n_tokens, dim, stream);
}

}  // namespace llmbench::cuda
