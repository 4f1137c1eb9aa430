// Prefill attention through cuBLAS batched GEMMs (see attention_gemm.cuh).
#include "kernels/cuda/attention_gemm.cuh"

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/common/error.h"
#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kSoftmaxThreads = 256;
constexpr std::size_t kAlign = 256;
constexpr int kPointerArrays = 5;  // K, Q, S (written by QK^T, read by PV), V, O
constexpr int kQueryBlock = 128;   // query rows per GEMM pair (see attention_gemm)

std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::size_t score_bytes_per_pair(const AttentionShape& s) {
  return static_cast<std::size_t>(s.n_new) * (s.past_len + s.n_new) * sizeof(float);
}

std::size_t bytes_for(const AttentionShape& s, std::size_t pairs) {
  return align_up(kPointerArrays * pairs * sizeof(void*)) + pairs * score_bytes_per_pair(s);
}

bool fits_int(std::int64_t v) { return v >= 0 && v <= INT_MAX; }

bool supported(const AttentionShape& s, const AttentionStrides& st) {
  const std::int64_t n_keys = std::int64_t(s.past_len) + s.n_new;
  return s.n_kv_heads > 0 && s.n_heads % s.n_kv_heads == 0 && fits_int(n_keys) &&
         fits_int(st.kv.seq) && fits_int(st.q.seq) && fits_int(st.out.seq) &&
         st.kv.seq >= s.head_dim && st.q.seq >= s.head_dim && st.out.seq >= s.head_dim;
}

// Pointer arrays of one chunk of pairs [first, first + count): pair p is (b, h) = (p / n_heads,
// p % n_heads), reading kv head h / (n_heads / n_kv_heads).
__global__ void fill_pointers_kernel(const float** k_ptr, const float** q_ptr, float** s_ptr,
                                     const float** v_ptr, float** o_ptr, const float* q,
                                     const float* k, const float* v, float* out, float* scores,
                                     AttentionShape s, AttentionStrides st, long long first,
                                     int count, int t0) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const long long pair = first + i;
  const long long b = pair / s.n_heads;
  const int h = static_cast<int>(pair % s.n_heads);
  const int g = h / (s.n_heads / s.n_kv_heads);
  const std::int64_t kv_at = b * st.kv.batch + g * st.kv.head;
  k_ptr[i] = k + kv_at;
  v_ptr[i] = v + kv_at;
  q_ptr[i] = q + b * st.q.batch + h * st.q.head + std::int64_t(t0) * st.q.seq;
  o_ptr[i] = out + b * st.out.batch + h * st.out.head + std::int64_t(t0) * st.out.seq;
  s_ptr[i] = scores + static_cast<std::size_t>(i) * s.n_new * (s.past_len + s.n_new);
}

// Row r = (pair, row i of the query block) of the scores, for query t = t0 + i over the block's
// n_keys keys: scale, causal mask (keys past past_len + t are dropped), max-subtracted exp,
// normalised in place; masked entries become 0. A pair's scores start pair_stride floats apart.
__global__ void __launch_bounds__(kSoftmaxThreads)
    causal_softmax_kernel(float* scores, std::size_t pair_stride, int rows, int n_keys, int t0,
                          int past_len, float scale) {
  __shared__ float scratch[detail::kWarpSize];
  const int pair = static_cast<int>(blockIdx.x / rows), i = static_cast<int>(blockIdx.x % rows);
  float* row = scores + pair * pair_stride + static_cast<std::size_t>(i) * n_keys;
  const int visible = past_len + t0 + i + 1;

  float m = -INFINITY;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) m = fmaxf(m, row[j] * scale);
  m = detail::block_max(m, scratch);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) {
    const float e = expf(row[j] * scale - m);
    row[j] = e;
    sum += e;
  }
  const float inv = 1.0f / detail::block_sum(sum, scratch);
  for (int j = threadIdx.x; j < n_keys; j += blockDim.x) row[j] = j < visible ? row[j] * inv : 0.0f;
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuda::attention_gemm: ") + what + " failed: " +
                cublas_status_name(status));
}

}  // namespace

std::size_t attention_gemm_scratch_bytes(const AttentionShape& s,
                                         std::size_t score_budget_bytes) {
  if (s.batch <= 0 || s.n_new <= 0 || s.n_heads <= 0 || s.head_dim <= 0) return 0;
  if (s.n_kv_heads <= 0 || s.n_heads % s.n_kv_heads != 0 ||
      !fits_int(std::int64_t(s.past_len) + s.n_new))
    return 0;
  const std::size_t pairs = static_cast<std::size_t>(s.batch) * s.n_heads;
  const std::size_t per_pair = score_bytes_per_pair(s);
  std::size_t chunk = per_pair == 0 ? pairs : score_budget_bytes / per_pair;
  chunk = std::max<std::size_t>(1, std::min(chunk, pairs));
  return bytes_for(s, chunk);
}

void attention_gemm(cublasHandle_t handle, float* out, const float* q, const float* k_cache,
                    const float* v_cache, const AttentionShape& s, const AttentionStrides& st,
                    void* scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  if (s.batch <= 0 || s.n_new <= 0 || s.n_heads <= 0) return;
  if (s.head_dim <= 0 || !supported(s, st))
    throw Error("cuda::attention_gemm: unsupported shape or strides (n_heads " +
                std::to_string(s.n_heads) + ", n_kv_heads " + std::to_string(s.n_kv_heads) +
                ", keys " + std::to_string(std::int64_t(s.past_len) + s.n_new) + ")");
  const long long pairs = static_cast<long long>(s.batch) * s.n_heads;
  // The largest chunk whose pointer arrays and scores fit the scratch.
  long long chunk = static_cast<long long>(
      scratch_bytes / (score_bytes_per_pair(s) + kPointerArrays * sizeof(void*)));
  chunk = std::min(chunk, pairs);
  while (chunk > 0 && bytes_for(s, static_cast<std::size_t>(chunk)) > scratch_bytes) --chunk;
  if (chunk <= 0 || chunk > INT_MAX)
    throw Error("cuda::attention_gemm: scratch of " + std::to_string(scratch_bytes) +
                " bytes is too small for one (sequence, head) pair");

  auto* base = static_cast<unsigned char*>(scratch);
  const std::size_t array_bytes = static_cast<std::size_t>(chunk) * sizeof(void*);
  const auto k_ptr = reinterpret_cast<const float**>(base);
  const auto q_ptr = reinterpret_cast<const float**>(base + array_bytes);
  const auto s_ptr = reinterpret_cast<float**>(base + 2 * array_bytes);
  const auto v_ptr = reinterpret_cast<const float**>(base + 3 * array_bytes);
  const auto o_ptr = reinterpret_cast<float**>(base + 4 * array_bytes);
  // The scores as the second GEMM's B operand: the same pointers, read-only.
  const auto p_ptr = reinterpret_cast<const float**>(base + 2 * array_bytes);
  auto* scores = reinterpret_cast<float*>(
      base + align_up(kPointerArrays * static_cast<std::size_t>(chunk) * sizeof(void*)));

  const int d = s.head_dim;
  const std::size_t pair_stride = score_bytes_per_pair(s) / sizeof(float);
  const float scale = attention_scale(d), one = 1.0f, zero = 0.0f;
  for (long long first = 0; first < pairs; first += chunk) {
    const int count = static_cast<int>(std::min(chunk, pairs - first));
    // Query blocks of kQueryBlock rows: block [t0, t0 + rows) sees at most past_len + t0 + rows
    // keys, so the GEMMs skip most of the masked triangle (5/8 of the full work at 512 tokens).
    for (int t0 = 0; t0 < s.n_new; t0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, s.n_new - t0);
      const int n_keys = s.past_len + t0 + rows;
      fill_pointers_kernel<<<(count + 127) / 128, 128, 0, stream>>>(
          k_ptr, q_ptr, s_ptr, v_ptr, o_ptr, q, k_cache, v_cache, out, scores, s, st, first,
          count, t0);
      LLMBENCH_CUDA_LAUNCH_CHECK();
      // Column-major view: S^T (n_keys x rows, ld n_keys) = K'^T Q', K' = d x n_keys (ld
      // kv.seq), Q' = d x rows (ld q.seq): the row-major S[t][j] = q_t . k_j.
      check_cublas(cublasSgemmBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, n_keys, rows, d, &one,
                                      k_ptr, static_cast<int>(st.kv.seq), q_ptr,
                                      static_cast<int>(st.q.seq), &zero, s_ptr, n_keys, count),
                   "cublasSgemmBatched (q k^T)");
      causal_softmax_kernel<<<static_cast<unsigned>(count) * rows, kSoftmaxThreads, 0, stream>>>(
          scores, pair_stride, rows, n_keys, t0, s.past_len, scale);
      LLMBENCH_CUDA_LAUNCH_CHECK();
      // O' (d x rows, ld out.seq) = V' (d x n_keys, ld kv.seq) P' (n_keys x rows, ld n_keys).
      check_cublas(cublasSgemmBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, rows, n_keys, &one,
                                      v_ptr, static_cast<int>(st.kv.seq), p_ptr, n_keys, &zero,
                                      o_ptr, static_cast<int>(st.out.seq), count),
                   "cublasSgemmBatched (p v)");
    }
  }
}

}  // namespace llmbench::cuda
