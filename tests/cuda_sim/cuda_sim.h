// cuda_sim: the CUDA kernels of kernels/cuda run on the CPU, so that their logic (indexing,
// splits, barriers, warp shuffles, shared memory, fp16 conversions, the launch arithmetic) is
// tested where there is no GPU. The kernel sources are compiled unchanged as C++ after
// translate_cu.py rewrites their launches (`k<<<grid, block, smem, stream>>>(args)` ->
// cuda_sim::launch) and shared-memory declarations; this header stands in for cuda_runtime.h,
// cuda_fp16.h and cuda_bf16.h (tests/cuda_sim/include).
//
// Execution model: a launch runs its blocks one after the other, the last block first (CUDA
// promises no order, and a kernel that counts on the first index running first, or finishing
// last, fails here rather than only under load on a GPU); a block's threads are fibers
// (stacks of their own) switched only at __syncthreads() and at warp shuffles, so each barrier
// and each shuffle is honoured exactly (one interleaving: between waits, threads run in index
// order). A stream being captured records launches instead of running them (cudaGraphLaunch
// replays them, cuda_sim_runtime.h). What it checks beyond the kernel's results:
//   - a __syncthreads() that some threads of a block never reach, or a shuffle whose mask names a
//     lane that exited or waits elsewhere, stops the launch with an error naming both (on a GPU:
//     a hang or undefined results);
//   - shared memory starts every block filled with 0xFF bytes (a float reads NaN), so a read of a
//     value no thread wrote shows in the results;
//   - the launch configuration: block size 1..1024, grid within CUDA's limits, dynamic shared
//     memory within the 227 KiB an sm_90 block may opt in to.
// The test build adds AddressSanitizer (each fiber switch annotated) and UBSan's alignment check
// for vector loads. Not modelled: timing, the memory model between blocks (one runs at a time, so
// __threadfence and the atomics are plain operations),
// warp-synchronous code without a shuffle, or device math's last bit (expf here is glibc's).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

struct CUstream_st;

// ---- vector types, as CUDA aligns them -------------------------------------------------------
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

// ---- function qualifiers ---------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ __attribute__((always_inline))
#define __launch_bounds__(...)

// CUDA's global min and max (device code calls them unqualified), for any two arithmetic types
// in their common type as CUDA's overloads do.
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(a) < C(b) ? C(b) : C(a);
}

namespace cuda_sim {

// The calling fiber's built-in variables (a thread of the block being run).
uint3 thread_idx();
uint3 block_idx();
dim3 block_dim();
dim3 grid_dim();

// Waits until every thread of the block has arrived (or exited).
void sync_threads();

enum class ShuffleKind { kIdx, kUp, kDown, kXor };
// The warp exchange under every __shfl_*_sync: `bits` are this lane's value; returns the source
// lane's, once every lane in `mask` has arrived.
std::uint64_t shuffle(unsigned mask, std::uint64_t bits, ShuffleKind kind, int arg, int width);

template <class T>
T shuffle_value(unsigned mask, T v, ShuffleKind kind, int arg, int width) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = shuffle(mask, bits, kind, arg, width);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

// Shared memory. Each `__shared__ T name[...]` of the kernel sources becomes a reference to
// static storage per declaration (blocks run one at a time), registered so that every block
// starts with it poisoned; `extern __shared__ T name[]` becomes the launch's dynamic buffer.
void register_shared(void* p, std::size_t bytes);
void* dynamic_shared_bytes();

template <class T, unsigned long long kSite>
T& shared() {
  alignas(16) static T storage;
  static const bool registered = (register_shared(&storage, sizeof(T)), true);
  (void)registered;
  return storage;
}

template <class T>
T* dynamic_shared() {
  return static_cast<T*>(dynamic_shared_bytes());
}

// Runs `thread` (the kernel called with one thread's copy of the arguments) for every thread of
// every block. Throws std::runtime_error for a bad configuration, a deadlock or a divergent
// shuffle, and rethrows what a thread threw.
void run_grid(dim3 grid, dim3 block, std::size_t dynamic_smem, const std::function<void()>& thread);

// The error cudaGetLastError() returns next (a launch that failed): set, taken (and cleared),
// peeked.
void set_last_error(int error);
int take_last_error();
int peek_last_error();

// Stream capture (cudaStreamBeginCapture ... cudaStreamEndCapture): while `stream` captures, a
// launch or an async copy on it is recorded, with its arguments as they are now, instead of run;
// cudaGraphLaunch runs the records in order.
bool capturing(CUstream_st* stream);
void record(CUstream_st* stream, std::function<void()> work);

inline dim3 as_dim3(dim3 d) { return d; }
inline dim3 as_dim3(unsigned long long n) { return dim3(static_cast<unsigned>(n)); }

// `kernel<<<grid, block, smem, stream>>>(args...)` becomes
// `cuda_sim::launch(callable, grid, block, smem, stream)(args...)`: the arguments are copied as
// a launch copies them, and each thread calls the kernel with its own copy.
template <class Kernel>
class Launch {
 public:
  Launch(Kernel kernel, dim3 grid, dim3 block, std::size_t smem, CUstream_st* stream)
      : kernel_(kernel), grid_(grid), block_(block), smem_(smem), stream_(stream) {}
  template <class... Args>
  void operator()(Args&&... args) const {
    auto work = [kernel = kernel_, grid = grid_, block = block_, smem = smem_,
                 copied = std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)] {
      run_grid(grid, block, smem, [&] {
        auto mine = copied;
        std::apply(kernel, mine);
      });
    };
    if (stream_ != nullptr && capturing(stream_))
      record(stream_, std::move(work));
    else
      work();
  }

 private:
  Kernel kernel_;
  dim3 grid_, block_;
  std::size_t smem_;
  CUstream_st* stream_;
};

template <class Kernel, class G, class B, class S = std::size_t, class Stream = CUstream_st*>
Launch<Kernel> launch(Kernel kernel, G grid, B block, S smem = 0, Stream stream = nullptr) {
  CUstream_st* s = nullptr;
  if constexpr (std::is_pointer_v<Stream>) s = stream;  // else the literal 0: the null stream
  return Launch<Kernel>(kernel, as_dim3(grid), as_dim3(block), static_cast<std::size_t>(smem), s);
}

}  // namespace cuda_sim

#define threadIdx (::cuda_sim::thread_idx())
#define blockIdx (::cuda_sim::block_idx())
#define blockDim (::cuda_sim::block_dim())
#define gridDim (::cuda_sim::grid_dim())

inline void __syncthreads() { ::cuda_sim::sync_threads(); }

template <class T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  return ::cuda_sim::shuffle_value(mask, v, ::cuda_sim::ShuffleKind::kIdx, src_lane, width);
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return ::cuda_sim::shuffle_value(mask, v, ::cuda_sim::ShuffleKind::kUp, int(delta), width);
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return ::cuda_sim::shuffle_value(mask, v, ::cuda_sim::ShuffleKind::kDown, int(delta), width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return ::cuda_sim::shuffle_value(mask, v, ::cuda_sim::ShuffleKind::kXor, lane_mask, width);
}

template <class T>
inline T __ldg(const T* p) {
  return *p;
}
template <class T>
inline T __ldcg(const T* p) {
  return *p;
}

// One block runs at a time and its threads switch only at barriers and shuffles, so these are
// atomic as plain operations.
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p = old + v;
  return old;
}

#include "tests/cuda_sim/cuda_sim_half.h"
#include "tests/cuda_sim/cuda_sim_runtime.h"
