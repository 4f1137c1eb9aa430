// Causal grouped-query attention over a KV cache: the plain CPU reference.
// One (sequence, head, query) triple per loop iteration: scores against every visible key,
// softmax with the row maximum subtracted, then the weighted sum of values. Every output is
// computed by one thread in a fixed order, so results do not depend on the thread count.
// Deliberately not: flash/online-softmax tiling or intrinsics. The only speed work is that the
// inner loops run over head_dim contiguously, four keys at a time, so the compiler vectorises
// them well even at the baseline instruction set.
#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace llmbench::cpu {

namespace {

// q . k over d contiguous floats.
float dot(const float* q, const float* k, int d) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < d; ++i) sum += q[i] * k[i];
  return sum;
}

// q . k_0 .. q . k_3 for four keys k_c = k + c * k_stride. Four independent sums keep the vector
// adder busy (a single sum waits out the add latency every step) and each q load serves four
// keys: about a third faster than four calls to dot().
void dot4(float* out, const float* q, const float* k, std::size_t k_stride, int d) {
  const float *k0 = k, *k1 = k + k_stride, *k2 = k + 2 * k_stride, *k3 = k + 3 * k_stride;
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int i = 0; i < d; ++i) {
    s0 += q[i] * k0[i];
    s1 += q[i] * k1[i];
    s2 += q[i] * k2[i];
    s3 += q[i] * k3[i];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// acc += p v over d contiguous floats.
void add_weighted(float* acc, float p, const float* v, int d) {
#pragma omp simd
  for (int i = 0; i < d; ++i) acc[i] += p * v[i];
}

// acc += p[0] v_0 + .. + p[3] v_3 for four values v_c = v + c * v_stride: one load and store of
// acc per four keys instead of per key, which is what bounds the one-key loop.
void add_weighted4(float* acc, const float* p, const float* v, std::size_t v_stride, int d) {
  const float *v0 = v, *v1 = v + v_stride, *v2 = v + 2 * v_stride, *v3 = v + 3 * v_stride;
#pragma omp simd
  for (int i = 0; i < d; ++i) acc[i] += p[0] * v0[i] + p[1] * v1[i] + p[2] * v2[i] + p[3] * v3[i];
}

}  // namespace

void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s) {
  const int d = s.head_dim;
  const int group = s.n_heads / s.n_kv_heads;  // query heads sharing one kv head
  const std::size_t kv_dim = static_cast<std::size_t>(s.n_kv_heads) * d;
  const int max_keys = s.past_len + s.n_new;  // the last query sees this many keys
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  // Multiply-adds in the score and value loops, to decide whether threads are worth starting.
  const long work = static_cast<long>(s.batch) * s.n_heads * s.n_new * max_keys * d;

#pragma omp parallel if (work > (1 << 16))
  {
    // Per-thread buffers, allocated once per call and reused for every query of this thread.
    std::vector<float> scores(max_keys);
    std::vector<float> acc(d);

    // Later queries see more keys, so hand out work dynamically to keep threads busy.
#pragma omp for collapse(3) schedule(dynamic, 4)
    for (int b = 0; b < s.batch; ++b) {
      for (int h = 0; h < s.n_heads; ++h) {
        for (int t = 0; t < s.n_new; ++t) {
          const std::size_t row = static_cast<std::size_t>(b) * s.n_new + t;
          const float* qh = q + row * s.q_stride + static_cast<std::size_t>(h) * d;
          // Key/value j of this sequence and kv head: k_seq + j * kv_dim, d contiguous floats.
          const std::size_t seq_offset = static_cast<std::size_t>(b) * s.cache_seq * kv_dim +
                                         static_cast<std::size_t>(h / group) * d;
          const float* k_seq = k_cache + seq_offset;
          const float* v_seq = v_cache + seq_offset;
          const int n_keys = s.past_len + t + 1;  // causal: keys [0, past_len + t]

          // scores[j] = q . k_j / sqrt(d), four keys at a time, and their maximum.
          int j = 0;
          for (; j + 4 <= n_keys; j += 4) dot4(&scores[j], qh, k_seq + j * kv_dim, kv_dim, d);
          for (; j < n_keys; ++j) scores[j] = dot(qh, k_seq + j * kv_dim, d);
          float max_score = -INFINITY;
          for (j = 0; j < n_keys; ++j) {
            scores[j] *= scale;
            max_score = std::max(max_score, scores[j]);
          }

          // Softmax numerators exp(score - max) (each <= 1), and their sum.
          float sum = 0.0f;
          for (j = 0; j < n_keys; ++j) {
            scores[j] = std::exp(scores[j] - max_score);
            sum += scores[j];
          }

          // acc = sum_j p_j v_j, four values at a time, then normalise once.
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (j = 0; j + 4 <= n_keys; j += 4) {
            add_weighted4(acc.data(), &scores[j], v_seq + j * kv_dim, kv_dim, d);
          }
          for (; j < n_keys; ++j) add_weighted(acc.data(), scores[j], v_seq + j * kv_dim, d);
          float* oh = out + row * s.out_stride + static_cast<std::size_t>(h) * d;
          for (int i = 0; i < d; ++i) oh[i] = acc[i] / sum;
        }
      }
    }
  }
}

}  // namespace llmbench::cpu
