// Embedding lookup: the plain CPU reference (the spec for kernels/cuda/embedding.cu).
#pragma once
#include <cstdint>

namespace llmbench::cpu {

// out[i, :] = table[tokens[i], :] for i in [0, n_tokens).
// out: [n_tokens, dim]; table: [vocab, dim]. Token ids must lie in [0, vocab); they are
// checked by the caller (the engine validates prompts once, not per op).
void embedding(float* out, const float* table, const int32_t* tokens, int n_tokens, int dim);

}  // namespace llmbench::cpu
