// Writing new keys/values into a preallocated KV cache on the GPU, of fp32 or, with --kv-dtype
// fp16, of IEEE binary16 elements. The specs are kernels/cpu/kv_cache.h and kernels/cpu/kv_f16.h.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmbench::cuda {

// src row (b * n_new + t) at src + row * src_stride holds kv_dim floats; it is copied to
// cache[b, past_len + t, :], where cache is [batch, cache_seq, kv_dim] contiguous.
// Device pointers; not bounds-checked (the engine checks past_len + n_new <= cache_seq).
void kv_cache_write(float* cache, const float* src, int src_stride, int batch, int n_new,
                    int past_len, int cache_seq, int kv_dim, cudaStream_t stream);

// kv_cache_write() with each row's position read from device memory: src row r = b * n_new + t
// goes to cache[b, positions[r], :] (positions: device int32, [batch * n_new]), so a captured
// decode step writes where the positions uploaded before its replay say (--cuda-graphs).
void kv_cache_write_at(float* cache, const float* src, int src_stride, int batch, int n_new,
                       const std::int32_t* positions, int cache_seq, int kv_dim,
                       cudaStream_t stream);

// kv_cache_write() and kv_cache_write_at() into a cache of halves: each value rounded to the
// nearest half, ties to even (cpu::kv_cache_write_f16: equal bit for bit).
void kv_cache_write_f16(__half* cache, const float* src, int src_stride, int batch, int n_new,
                        int past_len, int cache_seq, int kv_dim, cudaStream_t stream);
void kv_cache_write_f16_at(__half* cache, const float* src, int src_stride, int batch, int n_new,
                           const std::int32_t* positions, int cache_seq, int kv_dim,
                           cudaStream_t stream);

}  // namespace llmbench::cuda
