// Writing new keys/values into a preallocated KV cache: the plain CPU reference.
// One memcpy per (sequence, new token). Deliberately not: paged, quantised or bounds-checked
// (the engine sizes the cache and checks past_len + n_new <= cache_seq once per step).
#include "kernels/cpu/kv_cache.h"

#include <cstddef>
#include <cstring>

namespace llmbench::cpu {

void kv_cache_write(float* cache, const float* src, int src_stride, int batch, int n_new,
                    int past_len, int cache_seq, int kv_dim) {
  const std::size_t row_bytes = static_cast<std::size_t>(kv_dim) * sizeof(float);
#pragma omp parallel for collapse(2) if (static_cast<long>(batch) * n_new * kv_dim > (1 << 16))
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < n_new; ++t) {
      const std::size_t src_row = static_cast<std::size_t>(b) * n_new + t;
      const std::size_t dst_row = static_cast<std::size_t>(b) * cache_seq + past_len + t;
      std::memcpy(cache + dst_row * kv_dim, src + src_row * src_stride, row_bytes);
    }
  }
}

}  // namespace llmbench::cpu
