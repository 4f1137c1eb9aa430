// A fixture for tests/odr (never compiled): one library's request record...
#pragma once
#include <cstdint>

namespace llmbench {

struct RequestRecord {
  std::int64_t ttft_ns = 0;
  bool ok = false;
};

}  // namespace llmbench
