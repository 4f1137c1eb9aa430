// Weight-streaming decode GEMM against bf16/fp16 weights (see gemv_half.cuh).
#include "kernels/cuda/gemv_half.cuh"

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/common/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/widen.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kWarps = 8;  // weight rows per block
constexpr int kUnroll = 4;  // 16-byte loads in flight per lane

// Chunk c (eight activations) of an x row, as the weight dtype's values widened to float: x
// already in that dtype, or fp32 rounded to it here (narrow: convert.cu's rounding), so both
// forms multiply the same values in the same order and give the same bits.
template <typename T>
__device__ inline void x_chunk(const T* row, int c, float (&xf)[8]) {
  detail::widen8(__ldg(reinterpret_cast<const uint4*>(row) + c), static_cast<const T*>(nullptr),
                 xf);
}
template <typename T>
__device__ inline void x_chunk(const float* row, int c, float (&xf)[8]) {
  const float4* p = reinterpret_cast<const float4*>(row) + 2 * c;
  const float4 a = __ldg(p), b = __ldg(p + 1);
  const float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 8; ++i)
    xf[i] = detail::widen1(detail::narrow(v[i], static_cast<const T*>(nullptr)));
}

// X: T (x converted beforehand) or float (x rounded in the kernel).
template <typename T, typename X, int M>
__global__ void __launch_bounds__(kWarps * detail::kWarpSize)
    gemv_kernel(float* out, const X* x, const T* w, int n, int k, int lda) {
  const int lane = threadIdx.x % detail::kWarpSize;
  const int j = blockIdx.x * kWarps + threadIdx.x / detail::kWarpSize;
  if (j >= n) return;  // whole warps leave together: the shuffles below stay full-warp
  const int chunks = k / 8;
  const uint4* wr = reinterpret_cast<const uint4*>(w + static_cast<std::size_t>(j) * k);
  float acc[M] = {};
  for (int c0 = lane; c0 < chunks; c0 += detail::kWarpSize * kUnroll) {
    uint4 wv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = c0 + u * detail::kWarpSize;
      wv[u] = c < chunks ? __ldg(wr + c) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = c0 + u * detail::kWarpSize;
      if (c >= chunks) break;
      float wf[8];
      detail::widen8(wv[u], static_cast<const T*>(nullptr), wf);
#pragma unroll
      for (int r = 0; r < M; ++r) {
        float xf[8];
        x_chunk<T>(x + static_cast<std::size_t>(r) * lda, c, xf);
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[r] = fmaf(xf[i], wf[i], acc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < M; ++r) {
    const float sum = detail::warp_sum(acc[r]);
    if (lane == 0) out[static_cast<std::size_t>(r) * n + j] = sum;
  }
}

template <typename T, typename X, int M>
void launch_rows(float* out, const X* x, const T* w, int n, int k, int lda,
                 cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((n + kWarps - 1) / kWarps);
  const unsigned threads = kWarps * detail::kWarpSize;
  gemv_kernel<T, X, M><<<blocks, threads, 0, stream>>>(out, x, w, n, k, lda);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

template <typename T, typename X>
void launch(float* out, const X* x, const T* w, int m, int n, int k, int lda,
            cudaStream_t stream) {
  if (!gemv_half_supported(m, k, lda))
    throw Error(std::string(std::is_same_v<X, float> ? "cuda::gemv (fp32 x)" : "cuda::gemv") +
                ": unsupported shape (m " + std::to_string(m) + ", k " + std::to_string(k) +
                ", lda " + std::to_string(lda) + ")");
  if (n <= 0) return;
  switch (m) {
    case 1: launch_rows<T, X, 1>(out, x, w, n, k, lda, stream); break;
    case 2: launch_rows<T, X, 2>(out, x, w, n, k, lda, stream); break;
    case 3: launch_rows<T, X, 3>(out, x, w, n, k, lda, stream); break;
    default: launch_rows<T, X, 4>(out, x, w, n, k, lda, stream); break;
  }
}

}  // namespace

bool gemv_half_supported(int m, int k, int lda) {
  return m >= 1 && m <= kGemvRowsMax && k > 0 && k % 8 == 0 && lda >= k && lda % 8 == 0;
}

void gemv_bf16(float* out, const __nv_bfloat16* x, const __nv_bfloat16* w, int m, int n, int k,
               int lda, cudaStream_t stream) {
  launch(out, x, w, m, n, k, lda, stream);
}

void gemv_f16(float* out, const __half* x, const __half* w, int m, int n, int k, int lda,
              cudaStream_t stream) {
  launch(out, x, w, m, n, k, lda, stream);
}

void gemv_bf16_rounding_x(float* out, const float* x, const __nv_bfloat16* w, int m, int n, int k,
                          int lda, cudaStream_t stream) {
  launch(out, x, w, m, n, k, lda, stream);
}

void gemv_f16_rounding_x(float* out, const float* x, const __half* w, int m, int n, int k,
                         int lda, cudaStream_t stream) {
  launch(out, x, w, m, n, k, lda, stream);
}

}  // namespace llmbench::cuda
