// Backend selection (see backend_factory.h).
#include "engine/model/backend_factory.h"

#include "engine/model/cpu_backend.h"
#include "kernels/common/error.h"
#if defined(LLMBENCH_HAVE_CUDA)
#include "engine/model/cuda_backend.h"
#endif

namespace llmbench {

bool cuda_backend_compiled() {
#if defined(LLMBENCH_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

namespace {

int devices() {
#if defined(LLMBENCH_HAVE_CUDA)
  return cuda_device_count();
#else
  return 0;
#endif
}

}  // namespace

BackendChoice choose_backend(const std::string& requested) {
  if (requested == "cpu") return {"cpu", ""};
  if (requested == "cuda") {
    if (!cuda_backend_compiled())
      throw BadInput("--backend cuda: this llmbench was built without the CUDA backend");
    if (devices() == 0) throw BadInput("--backend cuda: no CUDA device found");
    return {"cuda", ""};
  }
  if (requested == "auto") {
    if (!cuda_backend_compiled()) return {"cpu", ""};
    if (devices() > 0) return {"cuda", ""};
    return {"cpu", "notice: --backend auto: no CUDA device found, using the cpu backend"};
  }
  throw BadInput("--backend: expected auto, cpu or cuda, got '" + requested + "'");
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads, bool sync_check) {
  if (name == "cpu") return std::make_unique<CpuBackend>(threads);
#if defined(LLMBENCH_HAVE_CUDA)
  if (name == "cuda") return std::make_unique<CudaBackend>(0, sync_check);
#endif
  (void)sync_check;
  throw BadInput("backend '" + name + "' is not available in this build");
}

}  // namespace llmbench
