// Attention over an fp16 KV cache on the GPU (see attention_f16.cuh): the kernels of
// attention_launch.cuh instantiated for __half caches, and the prefill route through cuBLAS.
// Prefill widens instead of running the tiled kernel: the tiled kernel re-reads every key for
// every query at a few TFLOP/s (attention_gemm.cuh says why prefill left it), and widening the
// visible positions once costs one read of the halves and one write and read of the floats,
// small beside the GEMMs' work at n_new >= 32 queries; it also keeps the arithmetic exactly
// attention_gemm's, which the fp32 tests already hold to the CPU.
// Deliberately not: fp16 GEMM operands (tensor cores on halves would round the queries and the
// probabilities too, which the fp32 model over a rounded cache does not do).
#include "kernels/cuda/attention_f16.cuh"

#include <algorithm>
#include <climits>
#include <string>

#include "kernels/common/error.h"
#include "kernels/common/op_math.h"
#include "kernels/cuda/attention_gemm.cuh"
#include "kernels/cuda/attention_launch.cuh"
#include "kernels/cuda/cuda_check.h"

namespace llmbench::cuda {

namespace {

constexpr int kWidenThreads = 256;
constexpr std::size_t kWidenAlign = 256;  // as attention_gemm's scratch

std::size_t align_widen(std::size_t n) { return (n + kWidenAlign - 1) / kWidenAlign * kWidenAlign; }

// One block per (sequence b, position j): blockIdx.x = b * len + j; threads over its kv_dim.
__global__ void __launch_bounds__(kWidenThreads)
    widen_kv_f16_kernel(float* out, HeadStrides out_s, const __half* in, HeadStrides in_s,
                        int len, int n_kv_heads, int head_dim) {
  const std::int64_t b = blockIdx.x / len, j = blockIdx.x % len;
  const int kv_dim = n_kv_heads * head_dim;
  for (int e = threadIdx.x; e < kv_dim; e += blockDim.x) {
    const int g = e / head_dim, i = e % head_dim;
    out[b * out_s.batch + j * out_s.seq + g * out_s.head + i] =
        __half2float(in[b * in_s.batch + j * in_s.seq + g * in_s.head + i]);
  }
}

// How attention_gemm_f16 splits a call: `seqs` sequences per chunk, whose widened keys (and as
// many bytes of values) take kv_bytes each, and attention_gemm's scratch for such a chunk.
struct WidenPlan {
  int seqs = 0;
  std::size_t kv_bytes = 0;
  std::size_t gemm_bytes = 0;  // 0: attention_gemm cannot take the shape
  std::size_t total() const { return 2 * kv_bytes + gemm_bytes; }
};

WidenPlan widen_plan(const AttentionShape& s, std::size_t budget_bytes) {
  const std::int64_t len = std::int64_t(s.past_len) + s.n_new;
  const std::size_t per_seq = static_cast<std::size_t>(len) * s.n_kv_heads *
                              static_cast<std::size_t>(s.head_dim) * sizeof(float);
  std::size_t seqs = per_seq == 0 ? std::size_t(s.batch) : budget_bytes / (2 * per_seq);
  seqs = std::max<std::size_t>(1, std::min<std::size_t>(seqs, std::size_t(s.batch)));
  AttentionShape chunk = s;
  chunk.batch = static_cast<int>(seqs);
  return {static_cast<int>(seqs), align_widen(seqs * per_seq),
          attention_gemm_scratch_bytes(chunk, budget_bytes)};
}

}  // namespace

bool attention_streamed_supported_f16(const AttentionShape& s, const AttentionStrides& strides,
                                      const __half* k_cache, const __half* v_cache) {
  return detail::streamed_vec_for(s, k_cache, v_cache, detail::StridedKvAt{strides.kv}) != 0;
}

void attention_strided_f16(float* out, const float* q, const __half* k_cache,
                           const __half* v_cache, const AttentionShape& s,
                           const AttentionStrides& strides, cudaStream_t stream,
                           const AttentionSplit& split, AttentionKernel kernel) {
  detail::launch_strided("cuda::attention_strided_f16", out, q, k_cache, v_cache, s, strides,
                         stream, split, kernel);
}

void attention_strided_at_f16(float* out, const float* q, const __half* k_cache,
                              const __half* v_cache, const AttentionShape& s,
                              const AttentionStrides& strides, const std::int32_t* positions,
                              int max_keys, cudaStream_t stream, const AttentionSplit& split,
                              AttentionKernel kernel) {
  detail::launch_strided_at("cuda::attention_strided_at_f16", out, q, k_cache, v_cache, s,
                            strides, positions, max_keys, stream, split, kernel);
}

void widen_kv_f16(float* out, const HeadStrides& out_strides, const __half* in,
                  const HeadStrides& in_strides, int batch, int len, int n_kv_heads, int head_dim,
                  cudaStream_t stream) {
  if (batch <= 0 || len <= 0 || n_kv_heads <= 0 || head_dim <= 0) return;
  const long long rows = static_cast<long long>(batch) * len;
  if (rows > INT_MAX) throw Error("cuda::widen_kv_f16: over 2^31 - 1 cache rows");
  widen_kv_f16_kernel<<<static_cast<unsigned>(rows), kWidenThreads, 0, stream>>>(
      out, out_strides, in, in_strides, len, n_kv_heads, head_dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

std::size_t attention_gemm_f16_scratch_bytes(const AttentionShape& s, std::size_t budget_bytes) {
  if (s.batch <= 0 || s.n_new <= 0 || s.n_heads <= 0 || s.head_dim <= 0 || s.n_kv_heads <= 0)
    return 0;
  const WidenPlan plan = widen_plan(s, budget_bytes);
  return plan.gemm_bytes == 0 ? 0 : plan.total();
}

void attention_gemm_f16(cublasHandle_t handle, float* out, const float* q, const __half* k_cache,
                        const __half* v_cache, const AttentionShape& s,
                        const AttentionStrides& strides, std::size_t budget_bytes, void* scratch,
                        std::size_t scratch_bytes, cudaStream_t stream) {
  if (s.batch <= 0 || s.n_new <= 0 || s.n_heads <= 0) return;
  const WidenPlan plan = s.head_dim > 0 && s.n_kv_heads > 0 ? widen_plan(s, budget_bytes)
                                                            : WidenPlan{};
  if (plan.gemm_bytes == 0)
    throw Error("cuda::attention_gemm_f16: unsupported shape (n_heads " +
                std::to_string(s.n_heads) + ", n_kv_heads " + std::to_string(s.n_kv_heads) +
                ", head_dim " + std::to_string(s.head_dim) + ", keys " +
                std::to_string(std::int64_t(s.past_len) + s.n_new) + ")");
  if (scratch_bytes < plan.total())
    throw Error("cuda::attention_gemm_f16: scratch of " + std::to_string(scratch_bytes) +
                " bytes, " + std::to_string(plan.total()) + " needed");
  auto* base = static_cast<unsigned char*>(scratch);
  auto* k_wide = reinterpret_cast<float*>(base);
  auto* v_wide = reinterpret_cast<float*>(base + plan.kv_bytes);
  void* gemm_scratch = base + 2 * plan.kv_bytes;
  const std::size_t gemm_bytes = scratch_bytes - 2 * plan.kv_bytes;

  const int len = s.past_len + s.n_new;  // fits an int: attention_gemm took the shape
  const int kv_dim = s.n_kv_heads * s.head_dim;
  // The widened copies: token-major [seqs, len, kv_dim], only the positions the queries see.
  const HeadStrides wide = token_major(len, kv_dim, s.head_dim);
  for (int b0 = 0; b0 < s.batch; b0 += plan.seqs) {
    const int seqs = std::min(plan.seqs, s.batch - b0);
    const std::int64_t b = b0;
    widen_kv_f16(k_wide, wide, k_cache + b * strides.kv.batch, strides.kv, seqs, len,
                 s.n_kv_heads, s.head_dim, stream);
    widen_kv_f16(v_wide, wide, v_cache + b * strides.kv.batch, strides.kv, seqs, len,
                 s.n_kv_heads, s.head_dim, stream);
    AttentionShape chunk = s;
    chunk.batch = seqs;
    chunk.cache_seq = len;
    // Stream order: the next chunk's widening waits for these GEMMs, which read the copies.
    attention_gemm(handle, out + b * strides.out.batch, q + b * strides.q.batch, k_wide, v_wide,
                   chunk, AttentionStrides{strides.q, wide, strides.out}, gemm_scratch,
                   gemm_bytes, stream);
  }
}

}  // namespace llmbench::cuda
