// Variants as JSON (see variants_json.h). nlohmann::json objects keep their keys sorted, so
// equal variants always dump to the same text and SQL can GROUP BY it.
#include "tools/store/variants_json.h"

#include <string>

namespace llmbench {

nlohmann::json variants_json(const Variants& v) {
  nlohmann::json j = {{"qkv", std::string(qkv_layout_name(v.qkv))},
                      {"kv_cache", std::string(kv_cache_kind_name(v.kv_cache))},
                      {"logits", std::string(logits_mode_name(v.logits))},
                      {"timer", std::string(timer_mode_name(v.timer))}};
  if (v.paged()) j["kv_cache_block"] = v.kv_cache_block;
  // Ragged cases only, so every static case's JSON (and its case key) is what it always was.
  if (v.ragged()) {
    j["prompt_len_stddev"] = v.prompt_len_stddev;
    j["output_len_stddev"] = v.output_len_stddev;
  }
  return j;
}

}  // namespace llmbench
