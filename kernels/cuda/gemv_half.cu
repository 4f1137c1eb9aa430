// Weight-streaming decode GEMM against bf16/fp16 weights (see gemv_half.cuh).
#include "kernels/cuda/gemv_half.cuh"

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/common/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/widen.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kWarps = 8;  // weight rows per block
constexpr int kUnroll = 4;  // 16-byte loads in flight per lane

template <typename T, int M>
__global__ void __launch_bounds__(kWarps * detail::kWarpSize)
    gemv_kernel(float* out, const T* x, const T* w, int n, int k, int lda) {
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
        const uint4 xv = __ldg(reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(r) * lda) + c);
        float xf[8];
        detail::widen8(xv, static_cast<const T*>(nullptr), xf);
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

template <typename T>
void launch(float* out, const T* x, const T* w, int m, int n, int k, int lda,
            cudaStream_t stream) {
  if (!gemv_half_supported(m, k, lda))
    throw Error("cuda::gemv: unsupported shape (m " + std::to_string(m) + ", k " +
                std::to_string(k) + ", lda " + std::to_string(lda) + ")");
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kWarps - 1) / kWarps);
  const unsigned threads = kWarps * detail::kWarpSize;
  switch (m) {
    case 1: gemv_kernel<T, 1><<<blocks, threads, 0, stream>>>(out, x, w, n, k, lda); break;
    case 2: gemv_kernel<T, 2><<<blocks, threads, 0, stream>>>(out, x, w, n, k, lda); break;
    case 3: gemv_kernel<T, 3><<<blocks, threads, 0, stream>>>(out, x, w, n, k, lda); break;
    default: gemv_kernel<T, 4><<<blocks, threads, 0, stream>>>(out, x, w, n, k, lda); break;
  }
  LLMBENCH_CUDA_LAUNCH_CHECK();
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

}  // namespace llmbench::cuda
