// Case and plan keys (see case_key.h).
#include "tools/store/case_key.h"

#include <fmt/core.h>

#include "tools/store/variants_json.h"

namespace llmbench {

std::uint64_t fnv1a64(std::string_view text, std::uint64_t h) {
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string case_key(const CaseSpec& s) {
  std::string ids = "-";
  if (!s.prompt.empty()) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::int32_t id : s.prompt) h = fnv1a64(std::to_string(id) + ",", h);
    ids = fmt::format("{:016x}", h);
  }
  return fmt::format(
      "model={};dtype={};backend={};batch={};prompt={};gen={};warmup={};repeat={};threads={};"
      "seed={};distinct={};prompt_ids={};trace={};profile_range={};variants={}",
      s.model, dtype_name(s.dtype), s.backend, s.batch, s.prompt_len, s.max_new_tokens, s.warmup,
      s.repeat, s.threads, s.seed, int(s.distinct_prompts), ids, trace_level_name(s.trace),
      int(s.profile_range), variants_json(s.variants).dump());
}

std::string plan_key(const std::vector<std::string>& case_keys, const std::string& shard) {
  std::uint64_t h = fnv1a64("shard=" + shard + "\n");
  for (const auto& k : case_keys) h = fnv1a64(k + "\n", h);
  return fmt::format("{:016x}", h);
}

}  // namespace llmbench
