// A case's engine variants as JSON: how bench_case.variants stores them and how --format json
// shows them. {"kv_cache": "prealloc", "logits": "device", "qkv": "fused", "timer": "device"},
// keys sorted, plus "kv_cache_block" when the cache is paged (the block size matters only then)
// and each of "fuse", "cuda_graphs" and "decode_attention" only when not its default.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/model/variants.h"

namespace llmbench {

nlohmann::json variants_json(const Variants& v);

// The inverse of variants_json; nullopt for text that is not such an object (an unknown key
// or value). Absent keys keep their defaults.
std::optional<Variants> variants_from_json(const nlohmann::json& j);

// How every printed output names a case's variants (table, csv, json, the bundled queries
// through the SQL function variants_label, compare's case labels): "default", or the
// non-default ones as Variants::describe() writes them ("qkv=permute kv_cache=paged/16").
// The database keeps the JSON object (a key SQL can GROUP BY); this is its one rendering.
std::string variants_label(const Variants& v);
// variants_label of stored JSON text; the text itself when it is not variants JSON.
std::string variants_label(const std::string& json_text);

}  // namespace llmbench
