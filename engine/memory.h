// Memory needed by a case, estimated before anything is allocated, and memory available.
#pragma once
#include <cstdint>

#include "engine/config.h"
#include "engine/variants.h"

namespace llmbench {

struct MemoryEstimate {
  std::int64_t weight_bytes = 0;      // ModelConfig::weight_bytes: matrices at the weights'
                                      // dtype, norm weights and biases at 4 bytes
  std::int64_t kv_cache_bytes = 0;    // 2 * n_layers * batch * max_len * kv_dim * 4 (prealloc;
                                      // KvCache::max_bytes for the other variants)
  std::int64_t activation_bytes = 0;  // the Session's activation buffers
  std::int64_t total() const { return weight_bytes + kv_cache_bytes + activation_bytes; }
};

MemoryEstimate estimate_memory(const ModelConfig& c, DType weight_dtype, int batch,
                               int prompt_len, int max_len, const Variants& variants = {});

// MemAvailable from /proc/meminfo, in bytes (-1 if it cannot be read).
std::int64_t available_host_memory();

// Throws llmbench::Error ("needs N bytes ... available M") when `need` exceeds `available`.
void check_fits(const MemoryEstimate& need, std::int64_t available, const char* where);

}  // namespace llmbench
