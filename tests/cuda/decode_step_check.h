// Inputs of one decode-shaped attention call for the CUDA kernel tests that run the step's
// length from device memory (test_cuda_graph_kernels.cpp, test_cuda_split_merge.cpp): the
// positions a step uploads and a shape with rows packed at n_heads * head_dim. Header-only.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/layout.h"

namespace llmbench::test {

// Positions past_len + t for every sequence's new token t.
inline std::vector<std::int32_t> decode_positions(int batch, int n_new, int past_len) {
  std::vector<std::int32_t> p;
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < n_new; ++t) p.push_back(past_len + t);
  return p;
}

// q and out rows of n_heads * head_dim, a cache of cache_seq positions.
inline AttentionShape decode_shape(int batch, int n_new, int past_len, int n_heads,
                                   int n_kv_heads, int head_dim, int cache_seq) {
  return AttentionShape{batch, n_new, past_len, n_heads, n_kv_heads, head_dim,
                        n_heads * head_dim, n_heads * head_dim, cache_seq};
}

}  // namespace llmbench::test
