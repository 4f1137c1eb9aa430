// Memory needed by a case, estimated before anything is allocated, and memory available.
#pragma once
#include <cstdint>

#include "engine/model/config.h"
#include "engine/model/variants.h"

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

// Throws llmbench::Error ("not enough host memory: the case needs N bytes (G GiB: weights A,
// KV cache B, activations C) but M bytes (H GiB) are available") when `need` exceeds
// `available`. `resident_weight_bytes` of the weights are already loaded: they are not needed
// again, and the message says so instead of listing them. Every part is printed with two
// decimals in GiB (or in MiB below 0.01 GiB), so none reads as zero when it is not.
void check_fits(const MemoryEstimate& need, std::int64_t available, const char* where,
                std::int64_t resident_weight_bytes = 0);

}  // namespace llmbench
