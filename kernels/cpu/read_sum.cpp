// Buffer sum for the read-bandwidth test (see read_sum.h).
#include "kernels/cpu/read_sum.h"

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/matmul_avx512.h"

namespace llmbench::cpu {

namespace {

// The portable version: 16 independent accumulators per thread so the loop is limited by
// memory, not by one dependent add chain; compiled for AVX-512, AVX2 and the baseline.
LLMBENCH_ISA_CLONES
float read_sum_portable(const float* data, std::int64_t n) {
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    float acc[16] = {};
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n / 16; ++i) {
#pragma omp simd
      for (int j = 0; j < 16; ++j) acc[j] += data[i * 16 + j];
    }
    for (float a : acc) total += a;
  }
  for (std::int64_t i = n / 16 * 16; i < n; ++i) total += data[i];
  return total;
}

}  // namespace

double read_sum_reference(const float* data, std::int64_t n) {
  double s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += data[i];
  return s;
}

float read_sum(const float* data, std::int64_t n) {
  if (cpu_isa().avx512) return avx512::read_sum_f32(data, n, kReadStreams, kReadPrefetchBytes);
  return read_sum_portable(data, n);
}

}  // namespace llmbench::cpu
