// The CUDA read probe (see read_probe.h): the device read test (kernels/cuda/read_sum.cuh) over a
// buffer of device 0 (the device CudaBackend runs on), each pass timed with one pair of CUDA
// events on a stream of its own and waited for before the next. Only compiled with CUDA.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/bench/read_probe.h"
#include "engine/bench/stats.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_event.h"
#include "kernels/cuda/read_sum.cuh"

namespace llmbench {

namespace {

class CudaReadProbe final : public ReadProbe {
 public:
  explicit CudaReadProbe(std::int64_t bytes) : bytes_(bytes / 16 * 16) {}
  ~CudaReadProbe() override {
    if (data_) LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(data_));
    if (partial_) LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(partial_));
    if (stream_) LLMBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  CudaReadProbe(const CudaReadProbe&) = delete;
  CudaReadProbe& operator=(const CudaReadProbe&) = delete;

  std::int64_t buffer_bytes() const override { return bytes_; }

  ReadProbeResult measure() override {
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t n = bytes_ / 4;
    if (!data_) {
      LLMBENCH_CUDA_CHECK(cudaSetDevice(0));
      LLMBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      LLMBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), std::size_t(bytes_)));
      LLMBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&partial_),
                                     sizeof(float) * cuda::kReadSumMaxBlocks));
      LLMBENCH_CUDA_CHECK(cudaMemsetAsync(data_, 0x3c, std::size_t(bytes_), stream_));
    }
    cuda::read_sum_partial(partial_, data_, n, stream_);  // warm-up
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    cuda::CudaEventPair events;
    std::vector<double> gbps;
    for (int i = 0; i < kReadProbePasses; ++i) {
      events.start(stream_);
      cuda::read_sum_partial(partial_, data_, n, stream_);
      events.stop(stream_);
      const float ms = events.elapsed_ms();
      LLMBENCH_CHECK(ms > 0, "a CUDA event interval of zero");
      gbps.push_back(double(bytes_) / (double(ms) * 1e-3) / 1e9);
    }
    ReadProbeResult r;
    r.gbps_best = *std::max_element(gbps.begin(), gbps.end());
    r.gbps_median = median(gbps);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  std::int64_t bytes_;
  float* data_ = nullptr;
  float* partial_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<ReadProbe> make_cuda_read_probe(std::int64_t buffer_bytes) {
  return std::make_unique<CudaReadProbe>(buffer_bytes);
}

}  // namespace llmbench
