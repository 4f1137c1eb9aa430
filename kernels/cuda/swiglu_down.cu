// SwiGLU into the down projection's GEMV (see swiglu_down.cuh).
// Each block first computes its own copy of the m x ffn_dim activations, rounded to the weight
// dtype, into shared memory (swiglu_value, kernels/common/op_math.h, then the conversion
// convert.cu uses), and then streams weight rows exactly as gemv_half.cu does (one warp per row,
// 16-byte loads, four in flight per lane, the same fma order and warp sum) with x read from
// shared memory instead of global. The activations cost ffn_dim silu per block, so the grid is
// sized to the blocks that fit on the GPU at once (each warp then takes several weight rows),
// not one block per eight rows as gemv_half; and each warp issues its first weight loads before
// the activations are computed, so the weight stream starts at once. The launch shape is worked
// out once per device and ffn_dim (grid_blocks).
// Deliberately not: split-k, tensor cores (as gemv_half), or fp32 weights (cuBLAS keeps those).
#include "kernels/cuda/swiglu_down.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "kernels/common/error.h"
#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/widen.cuh"
#include "kernels/cuda/gemv_half.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kWarps = 32;  // one block per SM's worth of warps: the silu prologue runs once
constexpr int kThreads = kWarps * detail::kWarpSize;
constexpr int kUnroll = 4;  // 16-byte loads in flight per lane, as gemv_half.cu

// This lane's chunks c0 + u * 32 (u < kUnroll) of weight row j, zeros past the row's end.
__device__ inline void load_chunks(uint4 (&wv)[kUnroll], const uint4* wr, int c0, int chunks) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int c = c0 + u * detail::kWarpSize;
    wv[u] = c < chunks ? __ldg(wr + c) : make_uint4(0, 0, 0, 0);
  }
}

template <typename T, int M>
__global__ void __launch_bounds__(kThreads)
    swiglu_down_kernel(float* out, const float* __restrict__ gate_up, const T* __restrict__ w,
                       int n, int k) {
  extern __shared__ uint4 act_raw[];  // [M, k] of T, 16-byte aligned rows (k % 8 == 0)
  T* act = reinterpret_cast<T*>(act_raw);
  const int lane = threadIdx.x % detail::kWarpSize;
  const int chunks = k / 8;
  const int row_step = gridDim.x * kWarps;
  int j = blockIdx.x * kWarps + threadIdx.x / detail::kWarpSize;

  // The first weight loads of this warp's first row go out before the prologue.
  uint4 wv[kUnroll];
  if (j < n) load_chunks(wv, reinterpret_cast<const uint4*>(w + static_cast<std::size_t>(j) * k),
                         lane, chunks);
  for (int e = threadIdx.x; e < M * k; e += blockDim.x) {
    const int r = e / k, i = e - r * k;
    const float* row = gate_up + static_cast<std::size_t>(r) * 2 * k;
    act[e] = detail::narrow(swiglu_value(row[i], row[k + i]), static_cast<const T*>(nullptr));
  }
  __syncthreads();

  bool preloaded = true;
  for (; j < n; j += row_step) {  // j is the same across a warp: shuffles stay full-warp
    const uint4* wr = reinterpret_cast<const uint4*>(w + static_cast<std::size_t>(j) * k);
    float acc[M] = {};
    for (int c0 = lane; c0 < chunks; c0 += detail::kWarpSize * kUnroll) {
      if (!preloaded) load_chunks(wv, wr, c0, chunks);
      preloaded = false;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int c = c0 + u * detail::kWarpSize;
        if (c >= chunks) break;
        float wf[8];
        detail::widen8(wv[u], static_cast<const T*>(nullptr), wf);
#pragma unroll
        for (int r = 0; r < M; ++r) {
          const uint4 xv = act_raw[static_cast<std::size_t>(r) * chunks + c];
          float xf[8];
          detail::widen8(xv, static_cast<const T*>(nullptr), xf);
#pragma unroll
          for (int i = 0; i < 8; ++i) acc[r] = fmaf(xf[i], wf[i], acc[r]);
        }
      }
    }
    preloaded = false;
#pragma unroll
    for (int r = 0; r < M; ++r) {
      const float sum = detail::warp_sum(acc[r]);
      if (lane == 0) out[static_cast<std::size_t>(r) * n + j] = sum;
    }
  }
}

std::size_t shared_bytes(int m, int k) { return static_cast<std::size_t>(m) * k * 2; }

// Blocks of one launch: as many as fit on the GPU at once (each then takes several weight rows),
// at most one per kWarps rows. Worked out once per (device, ffn_dim) and kept, with the shared
// memory limit raised then: the driver calls behind it cost microseconds that a launch-bound
// decode step cannot spare, and none of them runs again while a CUDA graph is captured.
template <typename T, int M>
int grid_blocks(int n, int k) {
  struct Cached {
    int device = -1, k = -1, sms = 0, per_sm = 0;
  };
  static std::mutex mutex;
  static Cached cached;
  int device = 0;
  LLMBENCH_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  if (cached.device != device || cached.k != k) {
    const auto kernel = swiglu_down_kernel<T, M>;
    const std::size_t bytes = shared_bytes(M, k);
    LLMBENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
    Cached c{device, k, 0, 0};
    LLMBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, device));
    LLMBENCH_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c.per_sm, kernel, kThreads, bytes));
    cached = c;
  }
  const int needed = (n + kWarps - 1) / kWarps;
  return std::max(1, std::min(needed, cached.sms * std::max(1, cached.per_sm)));
}

template <typename T, int M>
void launch_rows(float* out, const float* gate_up, const T* w, int n, int k,
                 cudaStream_t stream) {
  const int blocks = grid_blocks<T, M>(n, k);
  swiglu_down_kernel<T, M>
      <<<blocks, kThreads, shared_bytes(M, k), stream>>>(out, gate_up, w, n, k);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

template <typename T>
void launch(float* out, const float* gate_up, const T* w, int m, int n, int k,
            cudaStream_t stream) {
  if (!swiglu_down_supported(m, k))
    throw Error("cuda::swiglu_down: unsupported shape (m " + std::to_string(m) + ", ffn_dim " +
                std::to_string(k) + ")");
  if (n <= 0) return;
  switch (m) {
    case 1: launch_rows<T, 1>(out, gate_up, w, n, k, stream); break;
    case 2: launch_rows<T, 2>(out, gate_up, w, n, k, stream); break;
    case 3: launch_rows<T, 3>(out, gate_up, w, n, k, stream); break;
    default: launch_rows<T, 4>(out, gate_up, w, n, k, stream); break;
  }
}

}  // namespace

bool swiglu_down_supported(int m, int ffn_dim) {
  if (!gemv_half_supported(m, ffn_dim, ffn_dim)) return false;
  // The opt-in shared memory limit of the current device, read once per device.
  static std::mutex mutex;
  static int cached_device = -1, cached_optin = 0;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  const std::lock_guard<std::mutex> lock(mutex);
  if (device != cached_device) {
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    cached_device = device, cached_optin = optin;
  }
  return shared_bytes(m, ffn_dim) <= static_cast<std::size_t>(cached_optin);
}

void swiglu_down_bf16(float* out, const float* gate_up, const __nv_bfloat16* w, int m, int dim,
                      int ffn_dim, cudaStream_t stream) {
  launch(out, gate_up, w, m, dim, ffn_dim, stream);
}

void swiglu_down_f16(float* out, const float* gate_up, const __half* w, int m, int dim,
                     int ffn_dim, cudaStream_t stream) {
  launch(out, gate_up, w, m, dim, ffn_dim, stream);
}

}  // namespace llmbench::cuda
