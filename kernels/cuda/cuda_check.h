// Checks for every CUDA runtime and cuBLAS call: a failure throws llmbench::Error carrying
// file:line, the failed statement and the library's own error name and text. The _NOTHROW form is
// for destructors (it prints to stderr and goes on), and LLMBENCH_CUDA_LAUNCH_CHECK() follows
// every kernel launch (a bad launch configuration is reported by cudaGetLastError, not by the
// launch itself). Host-only header; usable from .cpp and .cu files alike.
// Deliberately not: a synchronising check (faults inside a kernel surface at the next
// synchronisation; the backend's --sync-check mode is what blames them on the right op).
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "kernels/common/error.h"

namespace llmbench::cuda {

// The enumerator name of a cuBLAS status ("CUBLAS_STATUS_INVALID_VALUE").
inline const char* cublas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_<unknown>";
}

// "file:line: `statement` failed: detail", the message every check below carries.
inline std::string check_failure_message(const char* file, int line, const char* statement,
                                         const std::string& detail) {
  return std::string(file) + ":" + std::to_string(line) + ": `" + statement +
         "` failed: " + detail;
}

inline std::string cuda_error_detail(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

[[noreturn]] inline void throw_cuda_error(const char* file, int line, const char* statement,
                                          cudaError_t err) {
  throw Error(check_failure_message(file, line, statement, cuda_error_detail(err)));
}

[[noreturn]] inline void throw_cublas_error(const char* file, int line, const char* statement,
                                            cublasStatus_t status) {
  throw Error(check_failure_message(file, line, statement, cublas_status_name(status)));
}

inline void report_cuda_error(const char* file, int line, const char* statement,
                              cudaError_t err) {
  std::fprintf(stderr, "llmbench: %s\n",
               check_failure_message(file, line, statement, cuda_error_detail(err)).c_str());
}

inline void report_cublas_error(const char* file, int line, const char* statement,
                                cublasStatus_t status) {
  std::fprintf(stderr, "llmbench: %s\n",
               check_failure_message(file, line, statement, cublas_status_name(status)).c_str());
}

}  // namespace llmbench::cuda

// The one check behind the four below: evaluates `stmt` once as a `status_type`, and unless it
// equals `ok` calls `on_failure(file, line, text, status)` (a throw_* or report_* function above).
// `text` is the statement as written, stringized by the outer macro so that a macro argument
// inside the statement appears unexpanded in the message.
#define LLMBENCH_CHECK_STATUS_(status_type, ok, on_failure, stmt, text)      \
  do {                                                                      \
    const status_type llmbench_status_ = (stmt);                            \
    if (llmbench_status_ != (ok))                                           \
      ::llmbench::cuda::on_failure(__FILE__, __LINE__, text, llmbench_status_); \
  } while (0)

// LLMBENCH_CUDA_CHECK(cudaMalloc(&p, n)): throws llmbench::Error unless the call returns
// cudaSuccess.
#define LLMBENCH_CUDA_CHECK(stmt) \
  LLMBENCH_CHECK_STATUS_(cudaError_t, cudaSuccess, throw_cuda_error, stmt, #stmt)

// For destructors and other places that must not throw: reports the failure on stderr.
#define LLMBENCH_CUDA_CHECK_NOTHROW(stmt) \
  LLMBENCH_CHECK_STATUS_(cudaError_t, cudaSuccess, report_cuda_error, stmt, #stmt)

// After every kernel launch: throws if the launch itself failed (bad configuration, no kernel
// image for this device, a sticky error from an earlier fault).
#define LLMBENCH_CUDA_LAUNCH_CHECK() LLMBENCH_CUDA_CHECK(cudaGetLastError())

// LLMBENCH_CUBLAS_CHECK(cublasCreate(&h)): throws unless the call returns CUBLAS_STATUS_SUCCESS.
#define LLMBENCH_CUBLAS_CHECK(stmt) \
  LLMBENCH_CHECK_STATUS_(cublasStatus_t, CUBLAS_STATUS_SUCCESS, throw_cublas_error, stmt, #stmt)

#define LLMBENCH_CUBLAS_CHECK_NOTHROW(stmt) \
  LLMBENCH_CHECK_STATUS_(cublasStatus_t, CUBLAS_STATUS_SUCCESS, report_cublas_error, stmt, #stmt)
