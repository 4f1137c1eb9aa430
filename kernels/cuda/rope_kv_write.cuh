// RoPE on q and k + the KV-cache write of k and v on the GPU, into fp32 or fp16 caches. The specs
// are kernels/cpu/rope_kv_write.h and kernels/cpu/kv_f16.h.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common/rope_kv_shape.h"

namespace llmbench::cuda {

// Rotates q and k of every row of qkv in place (rope.cuh, at positions[r]), and writes row r's
// rotated k and its v to k_cache / v_cache [b, positions[r], :]. Device pointers; positions:
// s.rows() device int32s (read by the kernel, so a captured graph can be replayed after new
// positions are uploaded). One kernel in place of rope (twice) and kv_cache_write (twice), with
// rope.cu's arithmetic: equal to that sequence bit for bit.
void rope_kv_write(float* qkv, float* k_cache, float* v_cache, const std::int32_t* positions,
                   const RopeKvShape& s, cudaStream_t stream);

// rope_kv_write() into caches of halves (--kv-dtype fp16): the same rotation of qkv in place,
// then each stored k and v rounded to the nearest half, ties to even. Equal bit for bit to rope
// (twice) and kv_cache_write_f16 (twice).
void rope_kv_write_f16(float* qkv, __half* k_cache, __half* v_cache,
                       const std::int32_t* positions, const RopeKvShape& s,
                       cudaStream_t stream);

}  // namespace llmbench::cuda
