// Element types of weights and activations. Names are the CLI's (--dtype fp32|fp16|bf16|int8|
// int4). int8 and int4 are weight-only block formats (kernels/cpu/quant.h, docs/metrics.md
// "Quantised weights"): they exist only as weight matrices, never as activations.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace llmbench {

enum class DType { kFp32, kFp16, kBf16, kInt8, kInt4 };

// Weights per quantisation block, along the input (k) dimension.
constexpr int kQuantBlock = 32;

constexpr bool dtype_is_quantized(DType t) { return t == DType::kInt8 || t == DType::kInt4; }

// Bytes per element of the float types (fp32 4, fp16/bf16 2). Not meaningful for the block
// formats: use dtype_bytes_x32 or dtype_bytes_for for anything that may be quantised.
constexpr std::size_t dtype_bytes(DType t) { return t == DType::kFp32 ? 4 : 2; }

// Bytes per 32 weights, scales included: fp32 128, fp16/bf16 64, int8 34 (32 int8 + an fp16
// scale), int4 18 (16 bytes of nibbles + an fp16 scale).
constexpr std::int64_t dtype_bytes_x32(DType t) {
  switch (t) {
    case DType::kFp32: return 128;
    case DType::kFp16:
    case DType::kBf16: return 64;
    case DType::kInt8: return 34;
    case DType::kInt4: return 18;
  }
  return 0;
}

// Bytes of `n` weights of type `t` (for the block formats, n is a multiple of kQuantBlock).
constexpr std::int64_t dtype_bytes_for(DType t, std::int64_t n) {
  return n / kQuantBlock * dtype_bytes_x32(t) + n % kQuantBlock * dtype_bytes_x32(t) / 32;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFp32: return "fp32";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    case DType::kInt8: return "int8";
    case DType::kInt4: return "int4";
  }
  return "?";
}

inline std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32") return DType::kFp32;
  if (s == "fp16") return DType::kFp16;
  if (s == "bf16") return DType::kBf16;
  if (s == "int8") return DType::kInt8;
  if (s == "int4") return DType::kInt4;
  return std::nullopt;
}

}  // namespace llmbench
