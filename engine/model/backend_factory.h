// Choosing and creating a backend by name (--backend auto|cpu|cuda): the one place that picks
// which backend a case, `serve` or `roofline` runs on, and the answer to "was the CUDA backend
// compiled in?" for code that takes no CUDA headers. The roofline's CUDA measurement
// (tools/cli/cmd_roofline.cpp, tools/run/peaks_cache.cpp) still tests LLMBENCH_HAVE_CUDA
// itself, to call engine/bench/cuda_roofline.h, which exists only in CUDA builds.
#pragma once
#include <memory>
#include <string>

#include "engine/model/backend.h"

namespace llmbench {

// True when this build contains the CUDA backend.
bool cuda_backend_compiled();

struct BackendChoice {
  std::string name;    // "cpu" or "cuda"
  std::string notice;  // one line for stderr when auto fell back to the CPU; else empty
};

// auto: cuda when compiled in and a device is present, else cpu (with a notice when CUDA is
// compiled in but no device is found). cuda: BadInput when not compiled in or no device.
BackendChoice choose_backend(const std::string& requested);

// Creates the backend `name` ("cpu" or "cuda") as choose_backend resolved it.
std::unique_ptr<Backend> make_backend(const std::string& name, int threads, bool sync_check);

}  // namespace llmbench
