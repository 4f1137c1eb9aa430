// Memory estimates (see memory.h). The activation list mirrors Session's constructor.
#include "engine/memory.h"

#include <fstream>
#include <sstream>
#include <string>

#include "kernels/common/error.h"
#include "engine/kv_cache.h"

namespace llmbench {

MemoryEstimate estimate_memory(const ModelConfig& c, DType weight_dtype, int batch,
                               int prompt_len, int max_len, const Variants& variants) {
  MemoryEstimate e;
  const std::int64_t f = 4, rows = std::int64_t(batch) * prompt_len;
  e.weight_bytes = c.weight_bytes(weight_dtype);
  e.kv_cache_bytes = KvCache::max_bytes(c, batch, max_len, variants);
  const std::int64_t logit_rows = variants.logits == LogitsMode::kAll ? rows : batch;
  e.activation_bytes =
      rows * (3 * std::int64_t(c.dim) + c.qkv_dim() + c.q_dim() + 3 * std::int64_t(c.ffn_dim)) * f +
      rows * 2 * 4 /* token ids, positions */ +
      std::int64_t(batch) * c.dim * f + logit_rows * c.vocab_size * f + std::int64_t(batch) * 8;
  if (variants.qkv == QkvLayout::kPermute)  // head-major q, k, v and attention output
    e.activation_bytes += rows * 2 * (std::int64_t(c.q_dim()) + c.kv_dim()) * f;
  if (variants.logits != LogitsMode::kDevice)  // the host copy of the logits
    e.activation_bytes += logit_rows * c.vocab_size * f;
  return e;
}

std::int64_t available_host_memory() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream ss(line.substr(13));
      std::int64_t kib = -1;
      ss >> kib;
      return kib < 0 ? -1 : kib * 1024;
    }
  }
  return -1;
}

void check_fits(const MemoryEstimate& need, std::int64_t available, const char* where) {
  if (available < 0 || need.total() <= available) return;
  auto gib = [](std::int64_t b) { return std::to_string(double(b) / (1 << 30)).substr(0, 6); };
  throw Error(std::string("not enough ") + where + " memory: the case needs " +
              std::to_string(need.total()) + " bytes (" + gib(need.total()) + " GiB: weights " +
              gib(need.weight_bytes) + ", KV cache " + gib(need.kv_cache_bytes) +
              ", activations " + gib(need.activation_bytes) + ") but " +
              std::to_string(available) + " bytes (" + gib(available) + " GiB) are available");
}

}  // namespace llmbench
