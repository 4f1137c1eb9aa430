// The one stderr line `run`, `serve` and `load` print when llmbench was compiled without
// optimisation ("warning: debug build, performance may be affected", as llama-bench says it):
// numbers from such a build measure the compiler's -O0 code, not the engine.
// Not the build facts themselves (tools/build_info/version.h).
#pragma once
#include <string>

namespace llmbench {

// True when this library was compiled with optimisation (GCC/Clang define __OPTIMIZE__ for
// -O1 and above); every library of one build shares the flags of its CMAKE_BUILD_TYPE.
bool built_with_optimisation();

// The warning line (newline included) for a build that is or is not optimised; "" when it is.
std::string debug_build_warning(bool optimised);

// Prints debug_build_warning(built_with_optimisation()) to stderr.
void warn_if_debug_build();

}  // namespace llmbench
