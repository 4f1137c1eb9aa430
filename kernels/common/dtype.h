// Element types of weights and activations. Names are the CLI's (--dtype fp32|fp16|bf16).
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace llmbench {

enum class DType { kFp32, kFp16, kBf16 };

constexpr std::size_t dtype_bytes(DType t) { return t == DType::kFp32 ? 4 : 2; }

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFp32: return "fp32";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
  }
  return "?";
}

inline std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32") return DType::kFp32;
  if (s == "fp16") return DType::kFp16;
  if (s == "bf16") return DType::kBf16;
  return std::nullopt;
}

}  // namespace llmbench
