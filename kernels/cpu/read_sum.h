// The sum of a float buffer, read once: the CPU roofline's read-bandwidth test
// (engine/bench/roofline.cpp). What matters is how fast it reads, so the fast version is written to
// stream at the machine's limit; the reference is the spec of the value.
// Deliberately not: a numerically careful sum (the value is only a sink for the loads).
#pragma once
#include <cstdint>

namespace llmbench::cpu {

// The spec: one plain sequential double sum.
double read_sum_reference(const float* data, std::int64_t n);

// What the roofline runs: on AVX-512 CPUs (cpu_isa.h) avx512::read_sum_f32 with the variant
// bench_kernels BM_read_sum measured fastest (kReadStreams sequential streams per thread,
// kReadPrefetchBytes of software prefetch); elsewhere 16 compiler-vectorised accumulators per
// thread over a static split. Float accumulation in an unspecified order.
float read_sum(const float* data, std::int64_t n);

inline constexpr int kReadStreams = 4;
inline constexpr int kReadPrefetchBytes = 1024;

}  // namespace llmbench::cpu
