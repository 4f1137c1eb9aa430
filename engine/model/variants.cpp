// Variant names and descriptions (see variants.h).
#include "engine/model/variants.h"

#include <charconv>

#include "kernels/common/error.h"

namespace llmbench {

std::string_view qkv_layout_name(QkvLayout v) {
  return v == QkvLayout::kFused ? "fused" : "permute";
}

std::string_view kv_cache_kind_name(KvCacheKind v) {
  switch (v) {
    case KvCacheKind::kPrealloc: return "prealloc";
    case KvCacheKind::kConcat: return "concat";
    case KvCacheKind::kPaged: return "paged";
    case KvCacheKind::kPagedGather: return "paged-gather";
  }
  return "?";
}

std::string_view logits_mode_name(LogitsMode v) {
  switch (v) {
    case LogitsMode::kDevice: return "device";
    case LogitsMode::kLast: return "last";
    case LogitsMode::kAll: return "all";
  }
  return "?";
}

std::string_view fuse_mode_name(FuseMode v) {
  return v == FuseMode::kNone ? "none" : "small";
}

std::string_view decode_attention_name(DecodeAttention v) {
  return v == DecodeAttention::kTiled ? "tiled" : "streamed";
}

std::optional<QkvLayout> parse_qkv_layout(std::string_view s) {
  if (s == "fused") return QkvLayout::kFused;
  if (s == "permute") return QkvLayout::kPermute;
  return std::nullopt;
}

std::optional<KvCacheKind> parse_kv_cache_kind(std::string_view s) {
  if (s == "prealloc") return KvCacheKind::kPrealloc;
  if (s == "concat") return KvCacheKind::kConcat;
  if (s == "paged") return KvCacheKind::kPaged;
  if (s == "paged-gather") return KvCacheKind::kPagedGather;
  return std::nullopt;
}

std::optional<LogitsMode> parse_logits_mode(std::string_view s) {
  if (s == "device") return LogitsMode::kDevice;
  if (s == "last") return LogitsMode::kLast;
  if (s == "all") return LogitsMode::kAll;
  return std::nullopt;
}

std::optional<FuseMode> parse_fuse_mode(std::string_view s) {
  if (s == "none") return FuseMode::kNone;
  if (s == "small") return FuseMode::kSmall;
  return std::nullopt;
}

std::optional<DecodeAttention> parse_decode_attention(std::string_view s) {
  if (s == "tiled") return DecodeAttention::kTiled;
  if (s == "streamed") return DecodeAttention::kStreamed;
  return std::nullopt;
}

std::string_view kv_dtype_name(KvDtype v) { return v == KvDtype::kFp16 ? "fp16" : "fp32"; }

std::optional<KvDtype> parse_kv_dtype(std::string_view s) {
  if (s == "fp32") return KvDtype::kFp32;
  if (s == "fp16") return KvDtype::kFp16;
  return std::nullopt;
}

void check_kv_dtype(const Variants& v) {
  if (v.kv_dtype == KvDtype::kFp32) return;
  if (v.kv_cache != KvCacheKind::kPrealloc || v.qkv != QkvLayout::kFused)
    throw BadInput("--kv-cache-dtype fp16 needs --kv-cache prealloc and --qkv fused (the paged, "
                   "concat and head-major caches are fp32)");
}

namespace {

// Shortest text that reads back as the same double ("32", "2.5").
std::string stddev_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

bool Variants::is_default() const { return describe().empty(); }

std::string Variants::describe() const {
  // Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "literal" + string&&.
  std::string out;
  auto add = [&out](std::string_view key, std::string_view value) {
    if (!out.empty()) out += ' ';
    out.append(key).append("=").append(value);
  };
  if (qkv != QkvLayout::kFused) add("qkv", qkv_layout_name(qkv));
  if (kv_cache != KvCacheKind::kPrealloc) {
    add("kv_cache", kv_cache_kind_name(kv_cache));
    if (paged()) out.append("/").append(std::to_string(kv_cache_block));
  }
  if (logits != LogitsMode::kDevice) add("logits", logits_mode_name(logits));
  if (fuse != FuseMode::kNone) add("fuse", fuse_mode_name(fuse));
  if (timer != TimerMode::kDevice) add("timer", timer_mode_name(timer));
  if (cuda_graphs) add("cuda_graphs", "on");
  if (decode_attention != DecodeAttention::kTiled)
    add("decode_attention", decode_attention_name(decode_attention));
  if (kv_dtype != KvDtype::kFp32) add("kv_cache_dtype", kv_dtype_name(kv_dtype));
  if (ragged()) {
    add("prompt_len_stddev", stddev_text(prompt_len_stddev));
    add("output_len_stddev", stddev_text(output_len_stddev));
  }
  return out;
}

}  // namespace llmbench
