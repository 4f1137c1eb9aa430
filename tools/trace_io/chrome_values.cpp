// Reading values of Chrome trace-event JSON (see chrome_values.h).
#include "tools/trace_io/chrome_values.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace llmbench {

using json = nlohmann::json;

std::optional<std::int64_t> chrome_us_to_ns(const json& v) {
  constexpr double kMaxUs = 9.2e15;  // |ns| < 2^63
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > std::uint64_t(kMaxUs)) return std::nullopt;
    return std::int64_t(u) * 1000;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i > std::int64_t(kMaxUs) || i < -std::int64_t(kMaxUs)) return std::nullopt;
    return i * 1000;
  }
  double d = 0;
  if (v.is_number_float()) {
    d = v.get<double>();
  } else if (v.is_string()) {  // "ts": "12.5" occurs in hand-written traces
    const std::string& s = v.get_ref<const std::string&>();
    char* end = nullptr;
    d = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(d) || std::fabs(d) > kMaxUs) return std::nullopt;
  return std::llround(d * 1000.0);  // trace processor: llround(us * 1000.0)
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// Categories of device activity (Kineto's current and older names): their tracks are GPU
// streams.
bool is_chrome_gpu_category(const std::string& cat) {
  static const char* const kGpu[] = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy",
                                     "memset", "gpu_user_annotation", "gpu_op"};
  const std::string c = lower(cat);
  return std::any_of(std::begin(kGpu), std::end(kGpu), [&](const char* g) { return c == g; });
}

std::string chrome_text(const json& e, const char* key) {
  auto it = e.find(key);
  if (it == e.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::optional<std::int64_t> chrome_int(const json& e, const char* key) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
    return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace llmbench
