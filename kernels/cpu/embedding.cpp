// Embedding lookup: the plain CPU reference. One row copy per token, parallel over tokens.
// Deliberately not: bounds-checked (the engine validates token ids once per prompt) or fused
// with anything else.
#include "kernels/cpu/embedding.h"

#include <cstddef>
#include <cstring>

namespace llmbench::cpu {

void embedding(float* out, const float* table, const int32_t* tokens, int n_tokens, int dim) {
  const std::size_t row_bytes = static_cast<std::size_t>(dim) * sizeof(float);
  // Offsets in size_t: vocab * dim can exceed INT_MAX for large vocabularies.
#pragma omp parallel for if (static_cast<long>(n_tokens) * dim > (1 << 16))
  for (int i = 0; i < n_tokens; ++i) {
    std::memcpy(out + static_cast<std::size_t>(i) * dim,
                table + static_cast<std::size_t>(tokens[i]) * dim, row_bytes);
  }
}

}  // namespace llmbench::cpu
