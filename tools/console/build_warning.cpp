// The debug-build warning (see build_warning.h).
#include "tools/console/build_warning.h"

#include <cstdio>

namespace llmbench {

bool built_with_optimisation() {
#if defined(__OPTIMIZE__)
  return true;
#else
  return false;
#endif
}

std::string debug_build_warning(bool optimised) {
  return optimised ? std::string() : "warning: debug build, performance may be affected\n";
}

void warn_if_debug_build() {
  const std::string w = debug_build_warning(built_with_optimisation());
  if (!w.empty()) std::fputs(w.c_str(), stderr);
}

}  // namespace llmbench
