// The CPU compute probe and the backend choice (see compute_probe.h).
#include "engine/bench/compute_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/quant.h"

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// v clamped to [lo, hi] and rounded down to a multiple of 64 (the packed int8/int4 layout's
// panels and blocks divide it).
int clamp64(std::int64_t v, int lo, int hi) {
  return int(std::clamp<std::int64_t>(v, lo, hi) / 64 * 64);
}

class CpuComputeProbe final : public ComputeProbe {
 public:
  ComputeProbeResult measure(DType dtype, const ProbeShape& s) override {
    const auto t0 = Clock::now();
    LLMBENCH_CHECK(s.m > 0 && s.n > 0 && s.k > 0, "compute probe: empty shape");
    Operands& op = operands(dtype, s);
    auto call = [&] {
      if (dtype == DType::kFp32)
        cpu::matmul(op.out.data(), op.x.data(), op.w32.data(), s.m, s.n, s.k, s.k);
      else if (!op.w16.empty())
        cpu::matmul_half(op.out.data(), op.x.data(), op.w16.data(), dtype, s.m, s.n, s.k, s.k);
      else
        cpu::matmul_quant_vnni(op.out.data(), op.x.data(), op.wq.data(), dtype, s.m, s.n, s.k,
                               s.k);
    };
    call();  // warm-up: weights into cache as far as they fit, OpenMP team awake
    const double flops = 2.0 * s.m * double(s.n) * s.k;
    std::vector<double> rates;
    for (int i = 0; i < kComputeProbeCalls; ++i) {
      const auto ts = Clock::now();
      call();
      rates.push_back(flops / seconds_since(ts) / 1e12);
    }
    ComputeProbeResult r;
    r.tflops_best = *std::max_element(rates.begin(), rates.end());
    r.tflops_median = median(rates);
    r.seconds = seconds_since(t0);
    return r;
  }

 private:
  struct Operands {
    std::vector<float> x, w32, out;
    std::vector<std::uint16_t> w16;
    std::vector<std::uint8_t> wq;
  };

  // The product's operands in the dtype's layout, made once per (dtype, shape).
  Operands& operands(DType dtype, const ProbeShape& s) {
    const auto key = std::make_tuple(int(dtype), s.m, s.n, s.k);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    Operands op;
    const std::int64_t wn = std::int64_t(s.n) * s.k;
    op.x.resize(std::size_t(s.m) * s.k);
    for (std::size_t i = 0; i < op.x.size(); ++i) op.x[i] = float(int(i % 7) - 3) * 0.125f;
    std::vector<float> w(static_cast<std::size_t>(wn));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 5) - 2) * 0.0625f;
    if (dtype == DType::kFp32) {
      op.w32 = std::move(w);
    } else if (dtype == DType::kBf16 || dtype == DType::kFp16) {
      op.w16.resize(std::size_t(wn));
      cpu::narrow_to_half(op.w16.data(), w.data(), wn, dtype);
    } else {
      op.wq.resize(std::size_t(dtype_bytes_for(dtype, wn)));
      cpu::quantize_packed(op.wq.data(), w.data(), dtype, s.n, s.k);
    }
    op.out.resize(std::size_t(s.m) * s.n);
    cache_.clear();  // one shape at a time: a sweep over dtypes keeps memory flat
    return cache_.emplace(key, std::move(op)).first->second;
  }

  std::map<std::tuple<int, int, int, int>, Operands> cache_;
};

}  // namespace

ProbeShape compute_probe_shape(const ModelConfig& c, std::int64_t prompt_tokens) {
  ProbeShape s;
  s.m = clamp64(prompt_tokens, 64, 256);
  s.n = clamp64(c.ffn_dim, 512, 2048);
  s.k = clamp64(c.dim, 512, 2048);
  return s;
}

std::unique_ptr<ComputeProbe> make_compute_probe(const std::string& backend) {
  if (backend == "cpu") return std::make_unique<CpuComputeProbe>();
#if defined(LLMBENCH_HAVE_CUDA)
  if (backend == "cuda") return make_cuda_compute_probe();
#endif
  throw BadInput("no compute probe for backend '" + backend + "'");
}

}  // namespace llmbench
