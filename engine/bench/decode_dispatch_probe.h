// The measurement behind the decode op classes' table (kernels/cpu/decode_dispatch.h): each
// path this CPU has for a class is timed on the model's decode shapes (one layer's projections:
// qkv, o, gate/up, down, at the class's row count), candidates interleaved, order alternating
// each round, and the path with the lowest median wins (the widest path, what runs without a
// table, stays unless another beats it by more than kDispatchTieFraction; a candidate that is
// clearly slower stops being timed: 2 x kDispatchDropRatio after one round, kDispatchDropRatio
// after two). The weights are copied as often as needed
// for one pass to stream at least kDispatchStreamBytes (twice a 32 MiB L3), or the model's
// whole stack when it is smaller (a model that fits in cache is timed in cache, as it runs).
// Short by design: the ten classes of tinyllama-1.1b took 7.8-10.4 s in all on the 2-vCPU AVX2
// VM while others' builds and benchmarks ran (load 2-4), about 0.6 s for `tiny`; the drop rule
// keeps the portable int8/int4 paths (3-8x slower) to one or two samples.
// Deliberately not: the LM head (one matrix, the same kernel), prefill rows, caching (that is
// tools/run/dispatch_cache.h's).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/config.h"
#include "kernels/cpu/decode_dispatch.h"

namespace llmbench {

inline constexpr std::int64_t kDispatchStreamBytes = std::int64_t(64) << 20;
inline constexpr int kDispatchRounds = 7;
inline constexpr double kDispatchTieFraction = 0.03;
inline constexpr double kDispatchDropRatio = 1.25;

// One layer's decode projections and how many copies of them a timed pass reads.
struct DecodeShapes {
  std::vector<std::pair<int, int>> nk;  // (n, k) of qkv, o, gate/up, down
  int layers = 1;                       // the model's: copies never exceed it
  // "dim=2048 q=2048 kv=256 ffn=5632 layers=22": what a cached table was measured on.
  std::string signature;
};
DecodeShapes decode_shapes(const ModelConfig& c);

struct PathTiming {
  cpu::IsaPath path;
  double median_ms = 0;  // one pass over every copy of the layer's projections
  int samples = 0;       // rounds it was timed in (fewer once it was clearly slower)
};
struct ClassTiming {
  int cls = 0;                      // decode_class_index
  std::vector<PathTiming> paths;    // the candidates, widest first (one: nothing timed)
  cpu::IsaPath winner = cpu::IsaPath::kPortable;
  int copies = 1;                   // layer copies per pass
  int passes_per_sample = 1;        // passes timed together (at least about 2 ms a sample)
};
struct DispatchMeasurement {
  std::vector<ClassTiming> classes;
  int rounds = 0;
  double seconds = 0;  // the whole measurement, allocation included
};

// Times every class (all kDecodeClasses) with the current OpenMP thread count on the paths
// cpu::decode_candidates(cpu_isa(), dtype) allows.
DispatchMeasurement measure_decode_dispatch(const DecodeShapes& shapes,
                                            int rounds = kDispatchRounds);

}  // namespace llmbench
