// Prefill attention as GEMMs (see attention_gemm.h).
#include "kernels/cpu/attention_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace llmbench::cpu {

void attention_gemm(float* out, const float* q, const float* k_cache, const float* v_cache,
                    const AttentionShape& s, const AttentionStrides& st) {
  const int d = s.head_dim;
  const int group = s.n_heads / s.n_kv_heads;
  const int n_keys = s.past_len + s.n_new;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  // One (sequence, head) per iteration; sgemm called inside the parallel region runs on the
  // calling thread alone (OpenBLAS's OpenMP build does not nest), so threads never compete.
#pragma omp parallel
  {
    std::vector<float> scores(std::size_t(s.n_new) * n_keys);
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (int b = 0; b < s.batch; ++b) {
      for (int h = 0; h < s.n_heads; ++h) {
        const int kvh = h / group;
        const float* qh = q + b * st.q.batch + h * st.q.head;
        const float* kh = k_cache + b * st.kv.batch + kvh * st.kv.head;
        const float* vh = v_cache + b * st.kv.batch + kvh * st.kv.head;
        float* oh = out + b * st.out.batch + h * st.out.head;
        float* sc = scores.data();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s.n_new, n_keys, d, scale, qh,
                    int(st.q.seq), kh, int(st.kv.seq), 0.0f, sc, n_keys);
        // Row t sees keys [0, past_len + t]: softmax over them, zero beyond.
        for (int t = 0; t < s.n_new; ++t) {
          float* row = sc + std::size_t(t) * n_keys;
          const int visible = s.past_len + t + 1;
          const float max_score = *std::max_element(row, row + visible);
          float sum = 0.0f;
          // Vectorised through glibc's libmvec expf (this file is built with -ffast-math,
          // kernels/CMakeLists.txt); the scalar exp would cost more than both GEMMs.
#pragma omp simd reduction(+ : sum)
          for (int j = 0; j < visible; ++j) {
            row[j] = std::exp(row[j] - max_score);
            sum += row[j];
          }
          const float inv = 1.0f / sum;
#pragma omp simd
          for (int j = 0; j < visible; ++j) row[j] *= inv;
          std::fill(row + visible, row + n_keys, 0.0f);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.n_new, d, n_keys, 1.0f, sc,
                    n_keys, vh, int(st.kv.seq), 0.0f, oh, int(st.out.seq));
      }
    }
  }
}

}  // namespace llmbench::cpu
