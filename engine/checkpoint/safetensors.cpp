// safetensors reading (see safetensors.h): map the file, validate the header completely, then
// hand out byte ranges and fp32 conversions of tensors. Every check names what it expected and
// what it found, because the user's next step is to look at the file.
#include "engine/checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "engine/checkpoint/input_file.h"
#include "kernels/common/error.h"
#include "engine/checkpoint/json_describe.h"
#include "engine/checkpoint/json_input.h"
#include "kernels/common/half.h"

namespace llmbench {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; F32 tensors are copied as host floats");

namespace {

using nlohmann::json;

// Headers beyond this are refused before parsing: real ones are a few hundred KB, and the
// reference implementation (safetensors' Rust crate) has the same limit.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

// Conversion work per OpenMP iteration; tensors of more than one chunk use all threads.
constexpr std::int64_t kChunkElements = 1 << 16;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw BadInput("safetensors '" + path + "': " + what);
}

// A JSON integer >= 0 as uint64, or nothing (negative, fractional, not a number).
bool as_count(const json& v, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {  // "-0" parses as signed 0
    out = std::uint64_t(v.get<std::int64_t>());
    return true;
  }
  return false;
}

// The one validated tensor entry `name: value` of the file at `path`, whose data section
// holds `data_bytes` bytes.
SafetensorsTensor parse_entry(const std::string& path, const std::string& name, const json& value,
                              std::uint64_t data_bytes) {
  const std::string where = "tensor '" + printable(name) + "': ";
  if (!value.is_object())
    bad(path, where + "expected an object with dtype, shape and data_offsets, found " +
                  describe_json(value));
  auto field = [&](const char* key) -> const json& {
    const auto it = value.find(key);
    if (it == value.end()) bad(path, where + "missing \"" + key + "\"");
    return *it;
  };
  SafetensorsTensor t;
  t.name = name;

  const json& dtype = field("dtype");
  if (!dtype.is_string())
    bad(path, where + "\"dtype\" must be a string, found " + describe_json(dtype));
  const auto& dtype_text = dtype.get_ref<const std::string&>();
  if (dtype_text == "F32") t.dtype = DType::kFp32;
  else if (dtype_text == "F16") t.dtype = DType::kFp16;
  else if (dtype_text == "BF16") t.dtype = DType::kBf16;
  else
    bad(path, where + "unsupported dtype '" + printable(dtype_text) +
                  "' (expected F32, F16 or BF16)");

  // Shape: non-negative integers whose product (the element count), and that times the dtype
  // size, fit in int64. A zero dimension makes the count 0 whatever the other dimensions are.
  const json& shape = field("shape");
  const std::string shape_rule = "\"shape\" must be an array of integers >= 0, found ";
  if (!shape.is_array()) bad(path, where + shape_rule + describe_json(shape));
  bool has_zero = false;
  for (const json& d : shape) {
    std::uint64_t n = 0;
    if (!as_count(d, n) || n > std::uint64_t(INT64_MAX))
      bad(path, where + shape_rule + describe_json(shape));
    t.shape.push_back(std::int64_t(n));
    has_zero = has_zero || n == 0;
  }
  std::int64_t numel = 1, bytes = 0;
  if (has_zero) {
    numel = 0;
  } else {
    for (auto d : t.shape)
      if (__builtin_mul_overflow(numel, d, &numel))
        bad(path, where + "\"shape\" " + shape_text(t.shape) +
                      " has more elements than fit in 64 bits");
  }
  if (__builtin_mul_overflow(numel, std::int64_t(dtype_bytes(t.dtype)), &bytes))
    bad(path, where + "\"shape\" " + shape_text(t.shape) + " is too large in bytes");

  const json& offsets = field("data_offsets");
  std::uint64_t begin = 0, end = 0;
  if (!offsets.is_array() || offsets.size() != 2 || !as_count(offsets[0], begin) ||
      !as_count(offsets[1], end) || begin > end)
    bad(path, where + "\"data_offsets\" must be [begin, end] with 0 <= begin <= end, found " +
                  describe_json(offsets));
  if (end > data_bytes)
    bad(path, where + "data_offsets end " + std::to_string(end) + " is beyond the data section (" +
                  std::to_string(data_bytes) + " bytes; truncated file?)");
  if (end - begin != std::uint64_t(bytes))
    bad(path, where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  ") hold " + std::to_string(end - begin) + " bytes, expected " +
                  std::to_string(bytes) + " (shape " + shape_text(t.shape) + " of " + dtype_text +
                  ")");
  t.begin = begin;
  t.end = end;
  return t;
}

// Throws unless the non-empty byte ranges of `tensors` are disjoint.
void check_no_overlap(const std::string& path, const std::vector<SafetensorsTensor>& tensors) {
  std::vector<const SafetensorsTensor*> by_offset;
  for (const auto& t : tensors)
    if (t.end > t.begin) by_offset.push_back(&t);  // empty tensors occupy no bytes
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  const SafetensorsTensor* reach = nullptr;  // the tensor reaching furthest so far
  for (const auto* t : by_offset) {
    if (reach && t->begin < reach->end)
      bad(path, "tensors '" + printable(reach->name) + "' [" + std::to_string(reach->begin) + ", " +
                    std::to_string(reach->end) + ") and '" + printable(t->name) + "' [" +
                    std::to_string(t->begin) + ", " + std::to_string(t->end) + ") overlap");
    if (!reach || t->end > reach->end) reach = t;
  }
}

// Widens elements [first, first + count) of `dtype` at `src` (little-endian, unaligned) to fp32.
void convert_range(DType dtype, const std::byte* src, float* dst, std::int64_t first,
                   std::int64_t count) {
  if (count <= 0) return;  // an empty tensor's dst may be null, which memcpy must not get
  if (dtype == DType::kFp32) {  // memcpy: src may be unaligned
    std::memcpy(dst + first, src + first * 4, std::size_t(count) * sizeof(float));
    return;
  }
  const bool fp16 = dtype == DType::kFp16;
  for (std::int64_t i = first; i < first + count; ++i) {
    const auto bits = std::uint16_t(std::uint16_t(src[2 * i]) | std::uint16_t(src[2 * i + 1]) << 8);
    dst[i] = fp16 ? fp16_to_fp32(bits) : bf16_to_fp32(bits);
  }
}

// Widens n elements of `dtype` at `src` to fp32, in chunks spread over the OpenMP threads.
void convert_to_f32(DType dtype, const std::byte* src, std::int64_t n, float* dst) {
  const std::int64_t chunks = (n + kChunkElements - 1) / kChunkElements;
  // Small tensors (norms, biases) stay out of OpenMP entirely: even a parallel region with
  // if(false) costs libgomp a thread-pool handshake, slow under OMP_WAIT_POLICY=passive.
  if (chunks <= 1) {
    convert_range(dtype, src, dst, 0, n);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c)
    convert_range(dtype, src, dst, c * kChunkElements,
                  std::min(kChunkElements, n - c * kChunkElements));
}

}  // namespace

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::int64_t SafetensorsTensor::numel() const {
  // Validated: the product fits, but only once a zero dimension is taken into account.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  // ---- map the file ----
  // A FIFO would block open() until a writer appeared: refused by type first, and opened
  // non-blocking so one swapped in between cannot hang either (fstat then refuses it).
  if (auto kind = special_file_kind(path)) bad(path, "is " + *kind + ", not a regular file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) bad(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    bad(path, "not a regular file");
  }
  const auto file_bytes = std::uint64_t(st.st_size);
  if (file_bytes < 8) {
    ::close(fd);
    bad(path, "file is " + std::to_string(file_bytes) +
                  " bytes, too short for the 8-byte header length (truncated file?)");
  }
  void* map = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file open
  if (map == MAP_FAILED)
    throw Error("safetensors '" + path + "': cannot map " + std::to_string(file_bytes) +
                " bytes: " + std::strerror(map_errno));
  map_ = static_cast<const std::byte*>(map);
  map_bytes_ = file_bytes;

  // ---- validate the header; the mapping is released if anything throws ----
  try {
    std::uint64_t header_bytes = 0;
    for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | std::uint64_t(map_[i]);
    if (header_bytes > file_bytes - 8)
      bad(path, "header length " + std::to_string(header_bytes) + " is beyond the file size (" +
                    std::to_string(file_bytes) + " bytes; truncated file?)");
    if (header_bytes > kMaxHeaderBytes)
      bad(path, "header length " + std::to_string(header_bytes) + " is over the limit of " +
                    std::to_string(kMaxHeaderBytes) + " bytes");
    data_start_ = 8 + header_bytes;
    const std::uint64_t data_bytes = file_bytes - data_start_;

    // Duplicate top-level keys are legal JSON that nlohmann resolves silently (last one wins);
    // the parser callback notices them so a tensor cannot be listed twice.
    std::set<std::string> names;
    std::string duplicate;
    const auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::key && depth == 1 && duplicate.empty() &&
          !names.insert(parsed.get<std::string>()).second)
        duplicate = parsed.get<std::string>();
      return true;
    };
    const auto* text = reinterpret_cast<const char*>(map_ + 8);
    auto parsed = parse_json(std::string_view(text, header_bytes), JsonLimits{}, on_event);
    if (!parsed.ok()) bad(path, "header is not valid JSON (" + parsed.error + ")");
    const json header = std::move(parsed.value);
    if (!header.is_object())
      bad(path, "header must be a JSON object, found " + describe_json(header));
    if (!duplicate.empty())
      bad(path, "tensor '" + printable(duplicate) + "' is listed twice in the header");

    for (const auto& [name, value] : header.items()) {
      if (name == "__metadata__") {  // free-form string map (format, producer): checked, unused
        bool ok = value.is_object();
        for (const auto& v : value) ok = ok && v.is_string();
        if (!ok)
          bad(path, "\"__metadata__\" must be an object of strings, found " + describe_json(value));
        continue;
      }
      tensors_.push_back(parse_entry(path, name, value, data_bytes));
    }
    check_no_overlap(path, tensors_);
    std::sort(tensors_.begin(), tensors_.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
  } catch (...) {
    unmap();
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() { unmap(); }

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept { *this = std::move(other); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    data_start_ = std::exchange(other.data_start_, 0);
    tensors_ = std::move(other.tensors_);
    other.tensors_.clear();  // a moved-from file is empty, not just "valid but unspecified"
  }
  return *this;
}

void SafetensorsFile::unmap() noexcept {
  if (map_) ::munmap(const_cast<std::byte*>(map_), map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                                   [](const auto& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

std::span<const std::byte> SafetensorsFile::bytes(const SafetensorsTensor& t) const {
  // begin <= end <= data section size was checked when the header was read.
  return {map_ + data_start_ + t.begin, std::size_t(t.end - t.begin)};
}

void SafetensorsFile::read_f32(const SafetensorsTensor& t, float* dst) const {
  convert_to_f32(t.dtype, bytes(t).data(), t.numel(), dst);
}

}  // namespace llmbench
