// Coverage-guided fuzzing of the Prometheus text-format reader that scrapes a server's
// /metrics (tools/load/prometheus_text.h): every line is a sample, a comment or a rejection
// with a reason; never a crash. scripts/libfuzzer.sh builds and runs it.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tools/load/prometheus_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const llmbench::PromText t = llmbench::parse_prometheus_text(text);
  for (const auto& r : t.rejected)
    if (r.line < 1 || r.reason.empty()) std::abort();
  for (const auto& s : t.samples) {
    if (s.name.empty()) std::abort();
    (void)llmbench::series_key(s);
  }
  return 0;
}
