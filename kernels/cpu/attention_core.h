// The loop nest shared by the CPU attention references (attention.cpp: a strided cache;
// paged_attention.cpp: a paged one). They differ only in where key/value j of a sequence and kv
// head lives, which the caller supplies as `kv_at`; everything else, including the order of
// every sum, is this one function, so the two agree bit for bit on the same data.
// Internal to kernels/cpu; the spec of each op is its own header.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention.h"

namespace llmbench::cpu::detail {

// q . k over d contiguous floats.
inline float dot(const float* q, const float* k, int d) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < d; ++i) sum += q[i] * k[i];
  return sum;
}

// q . k0 .. q . k3. Four independent sums keep the vector adder busy (a single sum waits out
// the add latency every step) and each q load serves four keys: about a third faster than four
// calls to dot().
inline void dot4(float* out, const float* q, const float* k0, const float* k1, const float* k2,
                 const float* k3, int d) {
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
inline void add_weighted(float* acc, float p, const float* v, int d) {
#pragma omp simd
  for (int i = 0; i < d; ++i) acc[i] += p * v[i];
}

// acc += p[0] v0 + .. + p[3] v3: one load and store of acc per four keys instead of per key,
// which is what bounds the one-key loop.
inline void add_weighted4(float* acc, const float* p, const float* v0, const float* v1,
                          const float* v2, const float* v3, int d) {
#pragma omp simd
  for (int i = 0; i < d; ++i) acc[i] += p[0] * v0[i] + p[1] * v1[i] + p[2] * v2[i] + p[3] * v3[i];
}

// One (sequence, head, query) triple per loop iteration: scores against every visible key,
// softmax with the row maximum subtracted, then the weighted sum of values. Every output is
// computed by one thread in a fixed order, so results do not depend on the thread count.
// kv_at(b, kv_head, j) -> std::int64_t: float offset of key j's head in k (and of value j's
// in v).
// keys_of(b, t) -> int: how many keys query t of sequence b sees (causal: past_len + t + 1;
// the ragged kernel reads it per row); max_keys bounds it over the call.
template <class KvAt, class KeysOf>
void attention_core(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                    const float* k, const float* v, const AttentionShape& s, const KvAt& kv_at,
                    const KeysOf& keys_of, int max_keys) {
  const int d = s.head_dim;
  const int group = s.n_heads / s.n_kv_heads;  // query heads sharing one kv head
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  // Multiply-adds in the score and value loops, to decide whether threads are worth starting.
  const long work = static_cast<long>(s.batch) * s.n_heads * s.n_new * max_keys * d;

#pragma omp parallel if (work > (1 << 16))
  {
    // Per-thread buffers, allocated once per call and reused for every query of this thread.
    std::vector<float> scores(max_keys);
    std::vector<float> acc(d);
    std::vector<std::int64_t> at(max_keys);  // offsets of the keys (and values) of one query

    // Later queries see more keys, so hand out work dynamically to keep threads busy.
#pragma omp for collapse(3) schedule(dynamic, 4)
    for (int b = 0; b < s.batch; ++b) {
      for (int h = 0; h < s.n_heads; ++h) {
        for (int t = 0; t < s.n_new; ++t) {
          const float* qh = q + b * q_s.batch + t * q_s.seq + h * q_s.head;
          const int n_keys = keys_of(b, t);  // causal: keys [0, n_keys)
          for (int j = 0; j < n_keys; ++j) at[j] = kv_at(b, h / group, j);

          // scores[j] = q . k_j / sqrt(d), four keys at a time, and their maximum.
          int j = 0;
          for (; j + 4 <= n_keys; j += 4)
            dot4(&scores[j], qh, k + at[j], k + at[j + 1], k + at[j + 2], k + at[j + 3], d);
          for (; j < n_keys; ++j) scores[j] = dot(qh, k + at[j], d);
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
            add_weighted4(acc.data(), &scores[j], v + at[j], v + at[j + 1], v + at[j + 2],
                          v + at[j + 3], d);
          }
          for (; j < n_keys; ++j) add_weighted(acc.data(), scores[j], v + at[j], d);
          float* oh = out + b * out_s.batch + t * out_s.seq + h * out_s.head;
          for (int i = 0; i < d; ++i) oh[i] = acc[i] / sum;
        }
      }
    }
  }
}

// The causal case of one shape: query t of every sequence sees keys [0, past_len + t].
template <class KvAt>
void attention_core(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                    const float* k, const float* v, const AttentionShape& s, const KvAt& kv_at) {
  const int past = s.past_len;
  attention_core(out, out_s, q, q_s, k, v, s, kv_at,
                 [past](int, int t) { return past + t + 1; }, s.past_len + s.n_new);
}

}  // namespace llmbench::cpu::detail
