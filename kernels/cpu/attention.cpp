// Causal grouped-query attention over a KV cache: the plain CPU reference.
// One (sequence, head, query) triple per loop iteration: scores against every visible key,
// softmax with the row maximum subtracted, then the weighted sum of values. Every output is
// computed by one thread in a fixed order, so results do not depend on the thread count.
// Deliberately not: flash/online-softmax tiling or a fused multi-query kernel; the inner loops
// run over head_dim contiguously so the compiler vectorises them, and that is all.
#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace llmbench::cpu {

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

          // scores[j] = q . k_j / sqrt(d), and their maximum.
          float max_score = -INFINITY;
          for (int j = 0; j < n_keys; ++j) {
            const float* kj = k_seq + j * kv_dim;
            float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
            for (int i = 0; i < d; ++i) dot += qh[i] * kj[i];
            scores[j] = dot * scale;
            max_score = std::max(max_score, scores[j]);
          }

          // Softmax numerators exp(score - max) (each <= 1), and their sum.
          float sum = 0.0f;
          for (int j = 0; j < n_keys; ++j) {
            scores[j] = std::exp(scores[j] - max_score);
            sum += scores[j];
          }

          // acc = sum_j p_j v_j, then normalise once.
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (int j = 0; j < n_keys; ++j) {
            const float* vj = v_seq + j * kv_dim;
            const float p = scores[j];
#pragma omp simd
            for (int i = 0; i < d; ++i) acc[i] += p * vj[i];
          }
          float* oh = out + row * s.out_stride + static_cast<std::size_t>(h) * d;
          for (int i = 0; i < d; ++i) oh[i] = acc[i] / sum;
        }
      }
    }
  }
}

}  // namespace llmbench::cpu
