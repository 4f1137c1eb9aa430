// cuBLAS is loaded on first use, not when the process starts. Linked normally, libcublas and the
// libcublasLt it needs are mapped and initialised by every process that contains the CUDA
// backend: on the 2-core CI VM that cost 0.1 s and 210 MB of resident memory per process
// (`llmbench --version` 0.13 s, 233 MB), paid by every `llmbench query`, every `load` child and
// most test processes, GPU or not. So llmbench does not link libcublas: cublas_loader.cpp defines
// the cuBLAS entry points llmbench calls (the declarations of <cublas_api.h>, so a signature
// cannot drift) and each forwards to the real one, resolved once with dlopen/dlsym when the first
// of them is called (a CUDA backend or GEMM creating its handle).
//
// The library is "libcublas.so.<CUBLAS_VER_MAJOR>" of the toolkit built against, looked up as the
// dynamic loader would (LD_LIBRARY_PATH, the binary's run path, the loader cache), then in the
// toolkit's library folder of the build. If it cannot be loaded, the first cuBLAS call throws
// llmbench::Error naming the library and the loader's reason.
#pragma once

#include <string>
#include <vector>

namespace llmbench::cuda {

// The entry points the loader forwards, in the order cublas_loader.cpp defines them.
const std::vector<std::string>& cublas_entry_points();

// Loads cuBLAS now (once per process) and resolves every entry point; throws llmbench::Error if
// the library or any entry point is missing. Every forwarding function calls it first.
void load_cublas();

// Whether load_cublas() has succeeded in this process.
bool cublas_loaded();

// dlopen()s the first of `paths` that loads (RTLD_NOW | RTLD_LOCAL) and returns its handle; if
// none does, throws llmbench::Error "cannot load <what>: <each path's reason>".
void* open_first_library(const std::vector<std::string>& paths, const std::string& what);

}  // namespace llmbench::cuda
