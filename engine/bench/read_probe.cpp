// The CPU read probe and the backend choice (see read_probe.h).
#include "engine/bench/read_probe.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"
#include "kernels/cpu/read_sum.h"

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class CpuReadProbe final : public ReadProbe {
 public:
  explicit CpuReadProbe(std::int64_t bytes) : bytes_(bytes / 64 * 64) {}

  std::int64_t buffer_bytes() const override { return bytes_; }

  ReadProbeResult measure() override {
    const auto t0 = Clock::now();
    const std::int64_t n = bytes_ / 4;
    if (!data_) {
      data_.reset(new float[std::size_t(n)]);  // uninitialised: the threads touch it first
      float* d = data_.get();
#pragma omp parallel for schedule(static)  // first touch by the threads that will read it
      for (std::int64_t i = 0; i < n; ++i) d[i] = float(i & 7);
    }
    volatile float sink = cpu::read_sum(data_.get(), n);  // warm-up
    std::vector<double> gbps;
    for (int i = 0; i < kReadProbePasses; ++i) {
      const auto ts = Clock::now();
      sink = cpu::read_sum(data_.get(), n);
      gbps.push_back(double(bytes_) / seconds_since(ts) / 1e9);
    }
    (void)sink;
    ReadProbeResult r;
    r.gbps_best = *std::max_element(gbps.begin(), gbps.end());
    r.gbps_median = median(gbps);
    r.seconds = seconds_since(t0);
    return r;
  }

 private:
  std::int64_t bytes_;
  std::unique_ptr<float[]> data_;
};

}  // namespace

std::unique_ptr<ReadProbe> make_read_probe(const std::string& backend, std::int64_t buffer_bytes) {
  if (backend == "cpu")
    return std::make_unique<CpuReadProbe>(buffer_bytes > 0 ? buffer_bytes : kReadProbeBytes);
#if defined(LLMBENCH_HAVE_CUDA)
  if (backend == "cuda")
    return make_cuda_read_probe(buffer_bytes > 0 ? buffer_bytes : kCudaReadProbeBytes);
#endif
  throw BadInput("no read probe for backend '" + backend + "'");
}

}  // namespace llmbench
