// A case's engine variants as JSON: how bench_case.variants stores them and how --format json
// shows them. {"kv_cache": "prealloc", "logits": "device", "qkv": "fused", "timer": "device"},
// keys sorted, plus "kv_cache_block" when the cache is paged (the block size matters only then).
#pragma once
#include <nlohmann/json.hpp>

#include "engine/model/variants.h"

namespace llmbench {

nlohmann::json variants_json(const Variants& v);

}  // namespace llmbench
