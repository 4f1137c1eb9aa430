// Variants as JSON (see variants_json.h). nlohmann::json objects keep their keys sorted, so
// equal variants always dump to the same text and SQL can GROUP BY it.
#include "tools/store/variants_json.h"
#include "engine/checkpoint/json_input.h"

#include <string>

namespace llmbench {

nlohmann::json variants_json(const Variants& v) {
  nlohmann::json j = {{"qkv", std::string(qkv_layout_name(v.qkv))},
                      {"kv_cache", std::string(kv_cache_kind_name(v.kv_cache))},
                      {"logits", std::string(logits_mode_name(v.logits))},
                      {"timer", std::string(timer_mode_name(v.timer))}};
  if (v.paged()) j["kv_cache_block"] = v.kv_cache_block;
  // Only when fused, so every unfused case keeps the JSON (and case key) it always had.
  if (v.fuse != FuseMode::kNone) j["fuse"] = std::string(fuse_mode_name(v.fuse));
  // Only when on, so every case without graphs keeps the JSON (and case key) it always had.
  if (v.cuda_graphs) j["cuda_graphs"] = "on";
  // Only when streamed, so every tiled case keeps the JSON (and case key) it always had.
  if (v.decode_attention != DecodeAttention::kTiled)
    j["decode_attention"] = std::string(decode_attention_name(v.decode_attention));
  // Only when fp16, so every fp32 case keeps the JSON (and case key) it always had.
  if (v.kv_dtype != KvDtype::kFp32) j["kv_cache_dtype"] = std::string(kv_dtype_name(v.kv_dtype));
  // Ragged cases only, so every static case's JSON (and its case key) is what it always was.
  if (v.ragged()) {
    j["prompt_len_stddev"] = v.prompt_len_stddev;
    j["output_len_stddev"] = v.output_len_stddev;
  }
  return j;
}

std::optional<Variants> variants_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  Variants v;
  for (const auto& [key, value] : j.items()) {
    if (value.is_string()) {
      const std::string text = value.get<std::string>();
      if (key == "qkv") {
        const auto x = parse_qkv_layout(text);
        if (!x) return std::nullopt;
        v.qkv = *x;
      } else if (key == "kv_cache") {
        const auto x = parse_kv_cache_kind(text);
        if (!x) return std::nullopt;
        v.kv_cache = *x;
      } else if (key == "logits") {
        const auto x = parse_logits_mode(text);
        if (!x) return std::nullopt;
        v.logits = *x;
      } else if (key == "timer") {
        const auto x = parse_timer_mode(text);
        if (!x) return std::nullopt;
        v.timer = *x;
      } else if (key == "fuse") {
        const auto x = parse_fuse_mode(text);
        if (!x) return std::nullopt;
        v.fuse = *x;
      } else if (key == "cuda_graphs" && (text == "on" || text == "off")) {
        v.cuda_graphs = text == "on";
      } else if (key == "decode_attention") {
        const auto x = parse_decode_attention(text);
        if (!x) return std::nullopt;
        v.decode_attention = *x;
      } else if (key == "kv_cache_dtype") {
        const auto x = parse_kv_dtype(text);
        if (!x) return std::nullopt;
        v.kv_dtype = *x;
      } else {
        return std::nullopt;
      }
    } else if (value.is_number() && key == "kv_cache_block") {
      v.kv_cache_block = value.get<int>();
    } else if (value.is_number() && key == "prompt_len_stddev") {
      v.prompt_len_stddev = value.get<double>();
    } else if (value.is_number() && key == "output_len_stddev") {
      v.output_len_stddev = value.get<double>();
    } else {
      return std::nullopt;
    }
  }
  return v;
}

std::string variants_label(const Variants& v) {
  const std::string d = v.describe();
  return d.empty() ? "default" : d;
}

std::string variants_label(const std::string& json_text) {
  const auto j = parse_json(json_text).value;
  if (j.is_discarded()) return json_text;
  const auto v = variants_from_json(j);
  return v ? variants_label(*v) : json_text;
}

}  // namespace llmbench
