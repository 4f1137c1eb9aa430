// The work items of the vectorised decode attention kernels (attention_avx512.cpp,
// attention_avx2.cpp): one item is (sequence, kv head, query token), whose `group` query heads
// share every key and value. Internal to kernels/cpu; not an op.
#pragma once
#include <cstdint>

#include "kernels/common/layout.h"

namespace llmbench::cpu::detail {

struct DecodeItem {
  int b, kv_head, t;
  int n_keys;                // causal: past_len + t + 1
  std::int64_t q, out;       // float offsets of the item's first query head in q and out
};

// Item `item` of s.batch * s.n_kv_heads * s.n_new, numbered token fastest, then kv head, then
// sequence.
inline DecodeItem decode_item(const AttentionShape& s, const HeadStrides& q_s,
                              const HeadStrides& out_s, int item) {
  DecodeItem it;
  it.t = item % s.n_new;
  it.kv_head = (item / s.n_new) % s.n_kv_heads;
  it.b = item / (s.n_new * s.n_kv_heads);
  it.n_keys = s.past_len + it.t + 1;
  const int head = it.kv_head * (s.n_heads / s.n_kv_heads);
  it.q = std::int64_t(it.b) * q_s.batch + std::int64_t(it.t) * q_s.seq + std::int64_t(head) * q_s.head;
  it.out = std::int64_t(it.b) * out_s.batch + std::int64_t(it.t) * out_s.seq +
           std::int64_t(head) * out_s.head;
  return it;
}

}  // namespace llmbench::cpu::detail
