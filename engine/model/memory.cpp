// Memory estimates (see memory.h). The activation list mirrors Session's constructor.
#include "engine/model/memory.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/common/error.h"
#include "engine/model/kv_cache.h"

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
  // The fp16 cache's prefill widens the prompt's keys and values into fp32 scratch for the
  // GEMMs (kernels/cpu/kv_f16.h attention_f16_gemm; counted even for prompts short enough for
  // the decode kernel, which needs none).
  if (variants.kv_dtype == KvDtype::kFp16) e.activation_bytes += 2 * rows * c.kv_dim() * f;
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

namespace {

// "64.00 GiB", "3.25 MiB", "0 bytes": two decimals in the largest unit that keeps them
// meaningful (std::to_string(x).substr(0, 6) printed 64 GiB as "0.0000" once x was scaled
// wrongly, and 1e-5 GiB as 0.0000 always).
std::string size_text(std::int64_t bytes) {
  char buf[64];
  const double b = double(bytes);
  if (bytes == 0) return "0 bytes";
  if (b >= 0.01 * double(1LL << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(1LL << 30));
  else if (b >= 0.01 * double(1 << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", b / double(1 << 20));
  else std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  return buf;
}

}  // namespace

void check_fits(const MemoryEstimate& need, std::int64_t available, const char* where,
                std::int64_t resident_weight_bytes) {
  const std::int64_t more = need.total() - resident_weight_bytes;
  if (available < 0 || more <= available) return;
  std::string parts;
  if (resident_weight_bytes > 0)
    parts = "KV cache " + size_text(need.kv_cache_bytes) + ", activations " +
            size_text(need.activation_bytes) + "; its " + size_text(resident_weight_bytes) +
            " of weights are already loaded";
  else
    parts = "weights " + size_text(need.weight_bytes) + ", KV cache " +
            size_text(need.kv_cache_bytes) + ", activations " + size_text(need.activation_bytes);
  throw Error(std::string("not enough ") + where + " memory: the case needs " +
              std::to_string(more) + (resident_weight_bytes > 0 ? " more" : "") + " bytes (" +
              size_text(more) + ": " + parts + ") but " + std::to_string(available) +
              " bytes (" + size_text(available) + ") are available");
}

}  // namespace llmbench
