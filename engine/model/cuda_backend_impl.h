// CudaBackend's private parts, shared by the files that define its ops (cuda_backend.cpp, and
// cuda_backend_kv_f16.cpp for --kv-cache-dtype fp16): the Impl that holds the CUDA handles, its
// grow-only scratch buffers, and the attention routing (which calls go to cuBLAS, how decode
// splits over keys, which kernel --decode-attention names). Here so both files route attention
// the same way.
// Not a public header: only CudaBackend's own .cpp files include it (it needs the CUDA and cuBLAS
// headers that cuda_backend.h keeps away from host code).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "engine/model/cuda_backend.h"
#include "engine/model/cuda_graph_driver.h"
#include "kernels/common/error.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/cuda_check.h"

namespace llmbench {

namespace detail {

// A device buffer that only grows; growing frees the old one (cudaFree waits for its readers).
// Growing tells the graph driver (captured graphs may point at the old buffer), and is refused
// while a graph is being captured (no allocation inside a capture).
struct GrowBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  CudaGraphDriver* graphs = nullptr;
  GrowBuffer() = default;
  GrowBuffer(const GrowBuffer&) = delete;
  GrowBuffer& operator=(const GrowBuffer&) = delete;
  ~GrowBuffer() {
    if (ptr) LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(ptr));
  }
  void* at_least(std::size_t n) {
    if (n > bytes) {
      if (graphs && graphs->capturing())
        throw Error("a scratch buffer would grow from " + std::to_string(bytes) + " to " +
                    std::to_string(n) + " bytes inside a graph capture");
      if (graphs) graphs->buffer_moved();
      if (ptr) LLMBENCH_CUDA_CHECK(cudaFree(ptr));
      ptr = nullptr;
      bytes = 0;
      LLMBENCH_CUDA_CHECK(cudaMalloc(&ptr, n));
      bytes = n;
    }
    return ptr;
  }
  // at_least, with the whole buffer zeroed on `stream` when it grows.
  void* zeroed_at_least(std::size_t n, cudaStream_t stream) {
    const bool grows = n > bytes;
    void* p = at_least(n);
    if (grows) LLMBENCH_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream));
    return p;
  }
};

// Prefill attention (n_new >= this) goes through cuBLAS GEMMs (kernels/cuda/attention_gemm.cuh);
// fewer query tokens use the attention kernel, split over keys when the queries alone cannot
// fill the GPU.
inline constexpr int kGemmAttentionMinQueries = 32;
// Scores of one chunk of (sequence, head) pairs in the GEMM attention: at most this many bytes.
// The fp16 cache's prefill widens the visible keys and values within the same budget.
inline constexpr std::size_t kAttentionScoreBudget = std::size_t{256} << 20;

// The split of a decode-shaped attention call: aim for two blocks per SM, with scratch from
// `buffer` (grown as needed) and the splits merged by their own last block (arrival counters
// from `arrivals`, zeroed when allocated; AttentionSplit). Only calls of fewer queries than the
// target split, so one counter per target block serves every call: allocated once, at the
// first split call (a warm-up step's), never inside a graph capture.
inline cuda::AttentionSplit attention_split(GrowBuffer& buffer, GrowBuffer& arrivals,
                                            int sm_count, const AttentionShape& s,
                                            cudaStream_t stream) {
  const int target = 2 * sm_count;
  const std::size_t floats = cuda::attention_split_floats(s, target);
  if (floats == 0) return {};
  auto* scratch = static_cast<float*>(buffer.at_least(floats * sizeof(float)));
  auto* counters = static_cast<unsigned*>(
      arrivals.zeroed_at_least(static_cast<std::size_t>(target) * sizeof(unsigned), stream));
  return {scratch, buffer.bytes / sizeof(float), target, counters,
          arrivals.bytes / sizeof(unsigned)};
}

// --decode-attention as the kernel launchers name it.
inline cuda::AttentionKernel kernel_of(DecodeAttention v) {
  return v == DecodeAttention::kStreamed ? cuda::AttentionKernel::kStreamed
                                         : cuda::AttentionKernel::kTiled;
}

}  // namespace detail

struct CudaBackend::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  int sm_count = 0;
  // matmul_half's activations converted to the weight dtype, and attention's scratch (the
  // prefill scores of attention_gemm, the split partials of decode, the widened fp16 cache of
  // an fp16 prefill). Grow-only: they reach their size in the first (warm-up) pass, so no
  // measured pass allocates.
  detail::GrowBuffer half_x;
  detail::GrowBuffer attention_scratch;
  detail::GrowBuffer attention_arrivals;  // the split decode's counters (attention_split)
  // cuBLAS's workspace, set once (cublasSetWorkspace) so that no cuBLAS call allocates one
  // inside a graph capture; 32 MiB, cuBLAS's own default on Hopper.
  detail::GrowBuffer cublas_workspace;
  std::unique_ptr<CudaGraphDriver> graphs;  // --cuda-graphs (cuda_graph.h)

  cuda::AttentionSplit attention_split(const AttentionShape& s) {
    return detail::attention_split(attention_scratch, attention_arrivals, sm_count, s, stream);
  }
};

}  // namespace llmbench
