// Values of Chrome trace-event JSON as the importer reads them: microsecond times as integer
// ns, text and integer fields of an event, which categories are device activity, and where a
// document nests too deep. The reader itself (events, tracks, flows) is import_chrome.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace llmbench {

// A JSON ts or dur in microseconds (integer, real or numeric string) as integer ns; nullopt
// for anything else or beyond the int64 range.
std::optional<std::int64_t> chrome_us_to_ns(const nlohmann::json& us);


// Categories of device activity (Kineto's current and older names): their tracks are GPU
// streams.
bool is_chrome_gpu_category(const std::string& cat);

// e[key] as text ("" when missing or null; non-strings as their JSON), and as an integer
// (nullopt when missing, not an integer, or beyond int64).
std::string chrome_text(const nlohmann::json& e, const char* key);
std::optional<std::int64_t> chrome_int(const nlohmann::json& e, const char* key);

}  // namespace llmbench
