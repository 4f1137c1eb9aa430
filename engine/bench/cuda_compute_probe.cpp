// The CUDA compute probe (see compute_probe.h): the engine's cuBLAS GEMM of the case's dtype
// (kernels/cuda/gemm.cuh) on device 0, each call timed with one pair of CUDA events on a stream
// of its own and waited for before the next. Tensor cores reach their rate only on large
// products, so the probe's rows are at least 4096 and n, k at least 4096 (a 4096^3 bf16 GEMM is
// 137 GFLOP: about 0.2 ms on an H100). Only compiled with CUDA.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/bench/compute_probe.h"
#include "engine/bench/stats.h"
#include "kernels/common/error.h"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_event.h"
#include "kernels/cuda/gemm.cuh"

namespace llmbench {

namespace {

constexpr int kCudaProbeMin = 4096;

class CudaComputeProbe final : public ComputeProbe {
 public:
  ~CudaComputeProbe() override { release(); }
  CudaComputeProbe() = default;
  CudaComputeProbe(const CudaComputeProbe&) = delete;
  CudaComputeProbe& operator=(const CudaComputeProbe&) = delete;

  ComputeProbeResult measure(DType dtype, const ProbeShape& shape) override {
    const auto t0 = std::chrono::steady_clock::now();
    const int m = std::max(shape.m, kCudaProbeMin), n = std::max(shape.n, kCudaProbeMin),
              k = std::max(shape.k, kCudaProbeMin);
    prepare(m, n, k);
    auto call = [&] {
      switch (dtype) {
        case DType::kBf16:
          cuda::gemm_bf16(cublas_->get(), out_, static_cast<const __nv_bfloat16*>(x16_),
                          static_cast<const __nv_bfloat16*>(w16_), m, n, k, k);
          break;
        case DType::kFp16:
          cuda::gemm_f16(cublas_->get(), out_, static_cast<const __half*>(x16_),
                         static_cast<const __half*>(w16_), m, n, k, k);
          break;
        default:
          cuda::gemm_f32(cublas_->get(), out_, x32_, w32_, m, n, k, k);
      }
    };
    if (dtype == DType::kBf16) {
      cuda::convert_f32_to_bf16(static_cast<__nv_bfloat16*>(x16_), x32_, std::size_t(m) * k, stream_);
      cuda::convert_f32_to_bf16(static_cast<__nv_bfloat16*>(w16_), w32_, std::size_t(n) * k, stream_);
    } else if (dtype == DType::kFp16) {
      cuda::convert_f32_to_f16(static_cast<__half*>(x16_), x32_, std::size_t(m) * k, stream_);
      cuda::convert_f32_to_f16(static_cast<__half*>(w16_), w32_, std::size_t(n) * k, stream_);
    }
    call();  // warm-up
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double flops = 2.0 * m * double(n) * k;
    cuda::CudaEventPair events;
    std::vector<double> rates;
    for (int i = 0; i < kComputeProbeCalls; ++i) {
      events.start(stream_);
      call();
      events.stop(stream_);
      const float ms = events.elapsed_ms();
      LLMBENCH_CHECK(ms > 0, "a CUDA event interval of zero");
      rates.push_back(flops / (double(ms) * 1e-3) / 1e12);
    }
    ComputeProbeResult r;
    r.tflops_best = *std::max_element(rates.begin(), rates.end());
    r.tflops_median = median(rates);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  // Device buffers for an m x n x k product (fp32 operands with values set once, 16-bit copies,
  // fp32 output), kept while the shape stays.
  void prepare(int m, int n, int k) {
    if (m == m_ && n == n_ && k == k_) return;
    release();
    LLMBENCH_CUDA_CHECK(cudaSetDevice(0));
    LLMBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    const std::size_t xs = std::size_t(m) * k, ws = std::size_t(n) * k, os = std::size_t(m) * n;
    LLMBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&x32_), xs * 4));
    LLMBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&w32_), ws * 4));
    LLMBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&out_), os * 4));
    LLMBENCH_CUDA_CHECK(cudaMalloc(&x16_, xs * 2));
    LLMBENCH_CUDA_CHECK(cudaMalloc(&w16_, ws * 2));
    // Non-constant inputs: tensor cores may clock higher on zeros than on real data.
    std::vector<float> h(std::max(xs, ws));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = float(int(i % 13) - 6) * 0.0625f;
    LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(x32_, h.data(), xs * 4, cudaMemcpyHostToDevice, stream_));
    LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(w32_, h.data(), ws * 4, cudaMemcpyHostToDevice, stream_));
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before h is freed
    cublas_ = std::make_unique<cuda::CublasHandle>();
    cublas_->set_stream(stream_);
    m_ = m, n_ = n, k_ = k;
  }

  void release() {
    cublas_.reset();
    for (void* p : {static_cast<void*>(x32_), static_cast<void*>(w32_),
                    static_cast<void*>(out_), x16_, w16_})
      if (p) LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(p));
    x32_ = w32_ = out_ = nullptr;
    x16_ = w16_ = nullptr;
    if (stream_) LLMBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
    stream_ = nullptr;
    m_ = n_ = k_ = 0;
  }

  cudaStream_t stream_ = nullptr;
  std::unique_ptr<cuda::CublasHandle> cublas_;
  float *x32_ = nullptr, *w32_ = nullptr, *out_ = nullptr;
  void *x16_ = nullptr, *w16_ = nullptr;
  int m_ = 0, n_ = 0, k_ = 0;
};

}  // namespace

std::unique_ptr<ComputeProbe> make_cuda_compute_probe() {
  return std::make_unique<CudaComputeProbe>();
}

}  // namespace llmbench
