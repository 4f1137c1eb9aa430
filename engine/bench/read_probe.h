// The read roof probed beside each case: a short version of the roofline's read test
// (engine/bench/roofline.h, cpu::read_sum; on CUDA the device read kernel of kernels/cuda/read_sum.cuh)
// that a run takes right before and right after every case with decode steps, so MBU divides the
// case's bytes by the bandwidth of that minute, not by a figure cached hours earlier (the VM's
// read bandwidth drifts between about 25 and 85 GB/s over minutes). docs/metrics.md, "The read
// roof beside each case", gives the method and its measured duration and stability.
// Deliberately not: a full roofline (no GEMMs, a smaller buffer, fewer passes) or a cache.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace llmbench {

struct ReadProbeResult {
  double gbps_best = 0;    // best pass: bytes / seconds / 1e9
  double gbps_median = 0;  // median pass
  double seconds = 0;      // the whole probe, warm-up pass included
};

class ReadProbe {
 public:
  virtual ~ReadProbe() = default;
  // One unmeasured pass, then kReadProbePasses timed reads of the whole buffer. The buffer is
  // allocated (and first touched) on the first call, so a run without decode steps never pays
  // for it.
  virtual ReadProbeResult measure() = 0;
  virtual std::int64_t buffer_bytes() const = 0;
};

// 128 MiB: four times the 32 MiB L3 of the machines this runs on (and 2.5x an H100's L2), so
// every pass streams from DRAM; at 25-85 GB/s one pass takes 1.6-5.4 ms.
inline constexpr std::int64_t kReadProbeBytes = std::int64_t(128) << 20;
inline constexpr std::int64_t kCudaReadProbeBytes = std::int64_t(512) << 20;
inline constexpr int kReadProbePasses = 8;

// The probe of backend "cpu" (cpu::read_sum on the calling thread's OpenMP team, the threads the
// run's CpuBackend set) or "cuda" (device 0; only when built with CUDA). buffer_bytes 0: the
// backend's default above.
std::unique_ptr<ReadProbe> make_read_probe(const std::string& backend,
                                           std::int64_t buffer_bytes = 0);

#if defined(LLMBENCH_HAVE_CUDA)
// engine/bench/cuda_read_probe.cpp.
std::unique_ptr<ReadProbe> make_cuda_read_probe(std::int64_t buffer_bytes);
#endif

}  // namespace llmbench
