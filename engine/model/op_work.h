// The analytic work of an op (FLOPs and bytes, recorded with its trace) and run_op, which runs
// one op of the forward pass inside its OpScope. Shared by model.cpp and kv_cache.cpp.
// Counts are for fp32 activations (4 bytes per value); weight matrices count their dtype's
// bytes.
#pragma once
#include <cstdint>
#include <utility>

#include "engine/model/config.h"
#include "engine/model/trace.h"

namespace llmbench {

// FLOPs (a multiply-add is 2) and bytes read + written.
struct Work {
  std::int64_t flops = 0, bytes = 0;
};

// out[m, n] = x[m, k] . w[n, k], with w stored as `w_dtype` (dtype_bytes_for: 2 bytes per
// element for bf16/fp16, blocks and scales for int8/int4; x and out are fp32).
inline Work gemm_work(std::int64_t m, std::int64_t n, std::int64_t k,
                      DType w_dtype = DType::kFp32) {
  return {2 * m * n * k, 4 * (m * k + m * n) + dtype_bytes_for(w_dtype, n * k)};
}

// An op over `elems` values that reads `reads` and writes `writes` arrays of that size.
inline Work elementwise_work(std::int64_t elems, std::int64_t flops_per_elem, int reads,
                             int writes) {
  return {flops_per_elem * elems, 4 * elems * (reads + writes)};
}

// A copy of `elems` values: read once, written once.
inline Work copy_work(std::int64_t elems) { return elementwise_work(elems, 0, 1, 1); }

// Causal attention of B x T queries after P cached positions: q.k and p.v over t + 1 keys;
// reads q, the cached k and v of each sequence once (kv_elem_bytes each: 2 for the fp16
// cache), writes the output.
inline Work attention_work(const ModelConfig& c, std::int64_t B, std::int64_t T, std::int64_t P,
                           int kv_elem_bytes = 4) {
  const std::int64_t keys = T * P + T * (T + 1) / 2;  // sum over queries of visible keys
  return {4 * B * c.n_heads * c.head_dim() * keys,
          4 * 2 * B * T * c.q_dim() + kv_elem_bytes * 2 * B * (P + T) * c.kv_dim()};
}

// Runs `run` inside the op's scope (NVTX range + timer pair when traced).
template <class F>
void run_op(Tracer* tracer, const char* name, OpCategory category, int layer, Work work,
            F&& run) {
  OpScope scope(tracer, name, category, layer, work.flops, work.bytes);
  std::forward<F>(run)();
}

}  // namespace llmbench
