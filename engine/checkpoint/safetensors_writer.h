// Writing safetensors files (the Hugging Face checkpoint format) from a WeightSource.
// Layout: an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape
// and byte range (padded with spaces to a multiple of 8), then the raw little-endian data.
// Tensors are produced and written one at a time, so memory holds one tensor, not the model.
// Deliberately not: a reader (the engine's checkpoint loader owns that), or any dtype other than
// F32, F16 and BF16.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/common/half.h"  // fp32_to_fp16, fp32_to_bf16 (used here; callers may use them too)
#include "engine/model/weights.h"

namespace llmbench {

// The safetensors dtype string of `t`: "F32", "F16" or "BF16".
const char* safetensors_dtype(DType t);

// Writes `specs` (in order, contiguous) with values from `source`, stored as `dtype`, to `path`.
// `metadata` becomes the header's "__metadata__" (string values, as the format requires).
// The file is written under a temporary name and renamed into place at the end, so a failure
// leaves no half-written file at `path`. Throws llmbench::Error naming the file on any failure.
void write_safetensors(const std::string& path, const std::vector<TensorSpec>& specs,
                       const WeightSource& source, DType dtype,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace llmbench
