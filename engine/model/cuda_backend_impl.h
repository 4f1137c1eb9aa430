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
};

// Prefill attention (n_new >= this) goes through cuBLAS GEMMs (kernels/cuda/attention_gemm.cuh);
// fewer query tokens use the attention kernel, split over keys when the queries alone cannot
// fill the GPU.
inline constexpr int kGemmAttentionMinQueries = 32;
// Scores of one chunk of (sequence, head) pairs in the GEMM attention: at most this many bytes.
// The fp16 cache's prefill widens the visible keys and values within the same budget.
inline constexpr std::size_t kAttentionScoreBudget = std::size_t{256} << 20;

// The split of a decode-shaped attention call: aim for two blocks per SM, with scratch from
// `buffer` (grown as needed).
inline cuda::AttentionSplit attention_split(GrowBuffer& buffer, int sm_count,
                                            const AttentionShape& s) {
  const int target = 2 * sm_count;
  const std::size_t floats = cuda::attention_split_floats(s, target);
  if (floats == 0) return {};
  auto* scratch = static_cast<float*>(buffer.at_least(floats * sizeof(float)));
  return {scratch, buffer.bytes / sizeof(float), target};
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
  // cuBLAS's workspace, set once (cublasSetWorkspace) so that no cuBLAS call allocates one
  // inside a graph capture; 32 MiB, cuBLAS's own default on Hopper.
  detail::GrowBuffer cublas_workspace;
  std::unique_ptr<CudaGraphDriver> graphs;  // --cuda-graphs (cuda_graph.h)
};

}  // namespace llmbench
