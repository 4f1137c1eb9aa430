// The cuBLAS entry points llmbench calls, each forwarding to libcublas loaded on first use
// (cublas_loader.h says why). Defining them here with <cublas_api.h>'s declarations in scope makes
// the compiler check every signature against the toolkit's.
#include "kernels/cuda/cublas_loader.h"

#include <cublas_api.h>
#include <dlfcn.h>

#include <array>
#include <atomic>

#include "kernels/common/error.h"

namespace llmbench::cuda {
namespace {

// One slot per forwarded entry point; kNames spells them as libcublas exports them (the _v2
// names <cublas_v2.h> maps cublasCreate and the others to).
enum Entry : int {
  kCreate,
  kDestroy,
  kSetStream,
  kGetStream,
  kSetWorkspace,
  kSetPointerMode,
  kSetMathMode,
  kGemmEx,
  kSgemmBatched,
  kEntryCount
};
constexpr const char* kNames[kEntryCount] = {
    "cublasCreate_v2",         "cublasDestroy_v2",  "cublasSetStream_v2",
    "cublasGetStream_v2",      "cublasSetWorkspace_v2", "cublasSetPointerMode_v2",
    "cublasSetMathMode",       "cublasGemmEx",      "cublasSgemmBatched"};

struct Library {
  void* handle = nullptr;
  std::array<void*, kEntryCount> entry{};
};

std::atomic<bool> g_loaded{false};

// The soname first (the dynamic loader's own search), then the build's toolkit folder.
std::vector<std::string> candidates() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> out = {soname};
#if defined(LLMBENCH_CUDA_LIBRARY_DIR)
  out.push_back(std::string(LLMBENCH_CUDA_LIBRARY_DIR) + "/" + soname);
#endif
  return out;
}

Library open_cublas() {
  Library lib;
  lib.handle = open_first_library(candidates(), "cuBLAS, which the CUDA backend needs");
  for (int i = 0; i < kEntryCount; ++i) {
    lib.entry[std::size_t(i)] = dlsym(lib.handle, kNames[i]);
    if (lib.entry[std::size_t(i)] == nullptr)
      throw Error(std::string("cuBLAS loaded but lacks ") + kNames[i] +
                  " (a cuBLAS older than the toolkit llmbench was built with, CUDA " +
                  std::to_string(CUBLAS_VER_MAJOR) + ")");
  }
  return lib;
}

// The library, loaded by the first call in the process. A failed load throws and is tried again
// by the next call (a static whose initialiser throws is not initialised).
const Library& library() {
  static const Library lib = open_cublas();
  g_loaded.store(true, std::memory_order_release);
  return lib;
}

// The real function of entry `e`, typed as the declaration of `Fn` in <cublas_api.h>.
template <typename Fn>
Fn* real(Entry e) {
  return reinterpret_cast<Fn*>(library().entry[std::size_t(e)]);
}

}  // namespace

void* open_first_library(const std::vector<std::string>& paths, const std::string& what) {
  std::string reasons;
  for (const std::string& path : paths) {
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* why = dlerror();
    reasons += (reasons.empty() ? "" : "; ") + std::string(why != nullptr ? why : path);
  }
  throw Error("cannot load " + what + ": " + reasons +
              " (install the CUDA toolkit's library or add its folder to LD_LIBRARY_PATH)");
}

const std::vector<std::string>& cublas_entry_points() {
  static const std::vector<std::string> names(std::begin(kNames), std::end(kNames));
  return names;
}

void load_cublas() { library(); }

bool cublas_loaded() { return g_loaded.load(std::memory_order_acquire); }

}  // namespace llmbench::cuda

using llmbench::cuda::real;

extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  return real<decltype(cublasCreate_v2)>(llmbench::cuda::kCreate)(handle);
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  return real<decltype(cublasDestroy_v2)>(llmbench::cuda::kDestroy)(handle);
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return real<decltype(cublasSetStream_v2)>(llmbench::cuda::kSetStream)(handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  return real<decltype(cublasGetStream_v2)>(llmbench::cuda::kGetStream)(handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace,
                                                  size_t bytes) {
  return real<decltype(cublasSetWorkspace_v2)>(llmbench::cuda::kSetWorkspace)(handle, workspace,
                                                                             bytes);
}

cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle,
                                                    cublasPointerMode_t mode) {
  return real<decltype(cublasSetPointerMode_v2)>(llmbench::cuda::kSetPointerMode)(handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return real<decltype(cublasSetMathMode)>(llmbench::cuda::kSetMathMode)(handle, mode);
}

// <cublas_api.h> also has an inline C++ overload of cublasGemmEx (the legacy cudaDataType compute
// type), so decltype(cublasGemmEx) is ambiguous: the exported one's type, spelled out.
using GemmExFn = cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                const void*, const void*, cudaDataType, int, const void*,
                                cudaDataType, int, const void*, void*, cudaDataType, int,
                                cublasComputeType_t, cublasGemmAlgo_t);

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb,
                                         const void* beta, void* C, cudaDataType Ctype, int ldc,
                                         cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  return real<GemmExFn>(llmbench::cuda::kGemmEx)(
      handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
      computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                               cublasOperation_t transb, int m, int n, int k,
                                               const float* alpha, const float* const Aarray[],
                                               int lda, const float* const Barray[], int ldb,
                                               const float* beta, float* const Carray[], int ldc,
                                               int batchCount) {
  return real<decltype(cublasSgemmBatched)>(llmbench::cuda::kSgemmBatched)(
      handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,
      batchCount);
}

}  // extern "C"
