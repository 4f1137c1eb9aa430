// A fixture for tests/odr (never compiled): ...and another library's, with the same name in
// the same namespace and other members: linked into one binary, an ODR violation.
#pragma once
#include <string>

namespace llmbench {

struct RequestRecord {
  std::string id;
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

}  // namespace llmbench
