// Reading safetensors files (the Hugging Face checkpoint format), memory-mapped and read-only.
// Layout: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (byte offsets into the data section that
// follows the header), an optional "__metadata__" string map, then the raw little-endian data.
// The whole header is validated when the file is opened, before any tensor byte is read, so a
// damaged or hostile file fails there with one BadInput line naming the file and the field.
// Deliberately not: a writer (engine/checkpoint/safetensors_writer.h), dtypes other than F32/F16/BF16, or
// knowledge of which tensors a model needs (engine/checkpoint/hf_checkpoint.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/dtype.h"

namespace llmbench {

// One validated tensor entry: end - begin == numel() * dtype_bytes(dtype), end within the file.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kFp32;       // F32, F16 or BF16: the only dtypes accepted
  std::vector<std::int64_t> shape;  // every dimension >= 0; [] is a scalar
  std::uint64_t begin = 0, end = 0; // byte range [begin, end) in the data section
  std::int64_t numel() const;
};

// "[a, b]": a shape as error messages print it.
std::string shape_text(const std::vector<std::int64_t>& shape);

// An open safetensors file. Move-only: it owns the mapping and unmaps it when destroyed.
class SafetensorsFile {
 public:
  // Maps `path` and validates its header: the length field, the JSON, every entry's dtype,
  // shape and offsets, and that no two tensors overlap. Throws BadInput naming `path` (and the
  // tensor and field) on any problem; Error only if the system refuses the mapping.
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  // Every tensor, sorted by name.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const SafetensorsTensor* find(std::string_view name) const;
  // The raw little-endian bytes of `t` (one of tensors()), inside the mapping: valid while
  // this object lives, and not aligned to anything.
  std::span<const std::byte> bytes(const SafetensorsTensor& t) const;
  // Converts `t` (one of tensors()) to fp32: writes t.numel() floats to dst. F16 and BF16 are
  // widened exactly; large tensors are converted by all OpenMP threads.
  void read_f32(const SafetensorsTensor& t, float* dst) const;

 private:
  void unmap() noexcept;

  std::string path_;
  const std::byte* map_ = nullptr;  // the whole file, PROT_READ
  std::size_t map_bytes_ = 0;
  std::uint64_t data_start_ = 0;    // 8 + header length: where offset 0 of the data section is
  std::vector<SafetensorsTensor> tensors_;
};

}  // namespace llmbench
