// Test helpers shared by test_checkpoint and fuzz_safetensors: scratch directories, raw file
// bytes, and tiny Hugging Face checkpoint directories written with the real safetensors writer.
// Deliberately not: a second safetensors writer (raw files are assembled from a header string
// and data bytes, so tests can write exactly the malformed file they mean).
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/config.h"
#include "engine/checkpoint/hf_config_writer.h"
#include "kernels/common/error.h"
#include "engine/model/weights.h"
#include "engine/checkpoint/safetensors_writer.h"

namespace llmbench::test {

namespace fs = std::filesystem;

// An empty directory scratch/<group>/<name> (removed first if it exists).
inline fs::path fresh_dir(const std::string& group, const std::string& name) {
  const fs::path dir = fs::path(LLMBENCH_TEST_SCRATCH) / group / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw Error("cannot write " + path.string());
}

// The 8-byte little-endian length field followed by `header` and `data`.
inline std::string safetensors_bytes(const std::string& header, const std::string& data,
                                     std::uint64_t header_len) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[std::size_t(i)] = char((header_len >> (8 * i)) & 0xFF);
  return out + header + data;
}
inline std::string safetensors_bytes(const std::string& header, const std::string& data) {
  return safetensors_bytes(header, data, header.size());
}

// config.json exactly as `llmbench export-weights` writes it, as a mutable json object.
inline nlohmann::json hf_config_json(const ModelConfig& c) {
  return nlohmann::json::parse(hf_config_for(c, DType::kFp32).dump());
}

inline void write_config(const fs::path& dir, const nlohmann::json& config) {
  write_bytes(dir / "config.json", config.dump(2));
}

// dir/config.json and dir/model.safetensors holding `source`'s values of every tensor of `c`.
inline void write_checkpoint(const fs::path& dir, const ModelConfig& c, const WeightSource& source,
                             DType dtype) {
  write_config(dir, hf_config_json(c));
  write_safetensors((dir / "model.safetensors").string(), hf_tensor_specs(c), source, dtype);
}

}  // namespace llmbench::test
