// safetensors writing (see safetensors_writer.h): header from nlohmann::ordered_json so tensors
// appear in checkpoint order, then each tensor filled, converted and written in turn.
#include "engine/checkpoint/safetensors_writer.h"

#include <bit>
#include <nlohmann/json.hpp>

#include "engine/checkpoint/atomic_file.h"
#include "kernels/common/error.h"

namespace llmbench {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this writer copies host bytes as they are");

const char* safetensors_dtype(DType t) {
  switch (t) {
    case DType::kFp32: return "F32";
    case DType::kFp16: return "F16";
    case DType::kBf16: return "BF16";
    case DType::kInt8:
    case DType::kInt4: break;  // quantised blocks are an engine detail, never written
  }
  return "?";
}


void write_safetensors(const std::string& path, const std::vector<TensorSpec>& specs,
                       const WeightSource& source, DType dtype,
                       const std::map<std::string, std::string>& metadata) {
  if (dtype_is_quantized(dtype))
    throw BadInput("safetensors: --dtype " + std::string(dtype_name(dtype)) +
                   " is not written (checkpoints stay fp32, fp16 or bf16)");
  const std::size_t elem_bytes = dtype_bytes(dtype);

  // ---- header: name -> dtype, shape, [begin, end) in the data section ----
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::uint64_t offset = 0;
  for (const auto& s : specs) {
    if (header.contains(s.name)) throw Error("safetensors: tensor '" + s.name + "' listed twice");
    const std::uint64_t bytes = std::uint64_t(s.numel()) * elem_bytes;
    header[s.name] = {{"dtype", safetensors_dtype(dtype)},
                      {"shape", s.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data then starts 8-byte aligned

  AtomicFile out(path, "safetensors");
  const std::uint64_t header_len = text.size();  // little-endian on this host (static_assert)
  out.write(&header_len, sizeof header_len);
  out.write(text.data(), text.size());

  // ---- data: one tensor at a time ----
  std::vector<float> values;
  std::vector<std::uint16_t> halves;
  for (const auto& s : specs) {
    values.resize(std::size_t(s.numel()));
    source.fill(s, values.data());
    if (dtype == DType::kFp32) {
      out.write(values.data(), values.size() * sizeof(float));
      continue;
    }
    halves.resize(values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
      halves[i] = dtype == DType::kFp16 ? fp32_to_fp16(values[i]) : fp32_to_bf16(values[i]);
    out.write(halves.data(), halves.size() * sizeof(std::uint16_t));
  }
  out.commit();
}

}  // namespace llmbench
