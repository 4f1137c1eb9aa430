// Timing the decode paths (see decode_dispatch_probe.h).
#include "engine/bench/decode_dispatch_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "engine/bench/stats.h"
#include "kernels/common/dtype.h"
#include "kernels/common/error.h"
#include "kernels/cpu/quant.h"

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t matrix_bytes(DType dtype, int n, int k) {
  return dtype_is_quantized(dtype) ? n * cpu::quant_row_bytes(dtype, k)
                                   : std::int64_t(n) * k * std::int64_t(dtype_bytes(dtype));
}

// The weights of `copies` copies of one layer, every byte written (so the pages are real, not
// the shared zero page) with values that stay finite and normal in every dtype: fp32 0.01,
// bf16/fp16 bits 0x2c00 (bf16 about 7e-12, fp16 0.0625), quantised bytes 0x11 (scales fp16
// 0x1111, about 6e-4).
struct LayerWeights {
  std::vector<std::uint8_t> bytes;
  std::vector<std::int64_t> offset;  // of matrix i of copy c: c * layer_bytes + offset[i]
  std::int64_t layer_bytes = 0;
  int copies = 1;

  LayerWeights(DType dtype, const DecodeShapes& s) {
    for (const auto& [n, k] : s.nk) {
      offset.push_back(layer_bytes);
      layer_bytes += (matrix_bytes(dtype, n, k) + 63) / 64 * 64;
    }
    copies = int(std::clamp<std::int64_t>(
        (kDispatchStreamBytes + layer_bytes - 1) / std::max<std::int64_t>(layer_bytes, 1), 1,
        std::max(1, s.layers)));
    bytes.resize(std::size_t(layer_bytes) * copies);
    if (dtype == DType::kFp32) {
      const float v = 0.01f;
      for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) std::memcpy(&bytes[i], &v, 4);
    } else if (dtype_is_quantized(dtype)) {
      std::fill(bytes.begin(), bytes.end(), std::uint8_t(0x11));
    } else {
      for (std::size_t i = 0; i + 2 <= bytes.size(); i += 2) bytes[i] = 0x00, bytes[i + 1] = 0x2c;
    }
  }
  const void* at(int copy, int matrix) const {
    return bytes.data() + std::int64_t(copy) * layer_bytes + offset[std::size_t(matrix)];
  }
};

}  // namespace

DecodeShapes decode_shapes(const ModelConfig& c) {
  DecodeShapes s;
  s.nk = {{c.qkv_dim(), c.dim}, {c.dim, c.q_dim()}, {2 * c.ffn_dim, c.dim}, {c.dim, c.ffn_dim}};
  s.layers = c.n_layers;
  s.signature = "dim=" + std::to_string(c.dim) + " q=" + std::to_string(c.q_dim()) +
                " kv=" + std::to_string(c.kv_dim()) + " ffn=" + std::to_string(c.ffn_dim) +
                " layers=" + std::to_string(c.n_layers);
  return s;
}

DispatchMeasurement measure_decode_dispatch(const DecodeShapes& shapes, int rounds) {
  LLMBENCH_CHECK(rounds >= 1 && !shapes.nk.empty(), "rounds >= 1 and a shape to time");
  const auto t0 = Clock::now();
  DispatchMeasurement out;
  out.rounds = rounds;
  int max_k = 0, max_n = 0;
  for (const auto& [n, k] : shapes.nk) max_k = std::max(max_k, k), max_n = std::max(max_n, n);
  // Activations of the size decode sees (RMS-normed values about 1), one output buffer.
  std::vector<float> x(std::size_t(cpu::kDecodeRowsMax) * max_k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 17) - 8) / 8.0f;
  std::vector<float> y(std::size_t(cpu::kDecodeRowsMax) * max_n);

  const DType dtypes[] = {DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt8, DType::kInt4};
  for (DType dtype : dtypes) {
    const std::vector<cpu::IsaPath> cand = cpu::decode_candidates(cpu::cpu_isa(), dtype);
    std::optional<LayerWeights> w;  // allocated only when there is a choice to time
    for (int c = 0; c < cpu::kDecodeClasses; ++c) {
      if (cpu::decode_class_dtype(c) != dtype) continue;
      ClassTiming ct;
      ct.cls = c;
      ct.winner = cand.front();
      if (cand.size() < 2) {
        ct.paths.push_back({cand.front(), 0.0, 0});
        out.classes.push_back(ct);
        continue;
      }
      if (!w) w.emplace(dtype, shapes);
      ct.copies = w->copies;
      const int m = cpu::decode_class_timed_rows(c);
      auto pass = [&](cpu::IsaPath p) {
        for (int copy = 0; copy < w->copies; ++copy)
          for (std::size_t i = 0; i < shapes.nk.size(); ++i) {
            const auto [n, k] = shapes.nk[i];
            cpu::decode_matmul_on(p, y.data(), x.data(), w->at(copy, int(i)), dtype, m, n, k, k);
          }
      };
      // Warm-up: the widest candidate once (OpenMP team awake, x in cache; the candidates read
      // the same weights); its time sets how many passes one sample takes (at least about
      // 2 ms, so that a model that fits in cache is not timed at the clock's resolution).
      const auto tw = Clock::now();
      pass(cand.front());
      const double widest_s = std::chrono::duration<double>(Clock::now() - tw).count();
      ct.passes_per_sample = int(std::clamp(2e-3 / std::max(widest_s, 1e-7), 1.0, 1000.0));
      std::vector<std::vector<double>> ms(cand.size());
      std::vector<bool> in(cand.size(), true);
      for (int r = 0; r < rounds; ++r) {
        // Interleaved, order alternating: a drift in the machine's bandwidth over the
        // measurement falls on every candidate alike.
        for (std::size_t j = 0; j < cand.size(); ++j) {
          const std::size_t i = r % 2 == 0 ? j : cand.size() - 1 - j;
          if (!in[i]) continue;
          const auto ts = Clock::now();
          for (int s = 0; s < ct.passes_per_sample; ++s) pass(cand[i]);
          ms[i].push_back(std::chrono::duration<double, std::milli>(Clock::now() - ts).count() /
                          ct.passes_per_sample);
        }
        // A candidate whose fastest sample is kDispatchDropRatio x the slowest sample of
        // another cannot win (after one sample each: twice that ratio); it stops being timed
        // (the portable quantised paths take 3-8x the AVX2 time, and would otherwise cost most
        // of the measurement).
        const double ratio = r == 0 ? 2 * kDispatchDropRatio : kDispatchDropRatio;
        double best_worst = 1e300;
        for (std::size_t i = 0; i < cand.size(); ++i)
          if (in[i]) best_worst = std::min(best_worst, *std::max_element(ms[i].begin(), ms[i].end()));
        int left = 0;
        for (std::size_t i = 0; i < cand.size(); ++i) {
          if (in[i] && *std::min_element(ms[i].begin(), ms[i].end()) > ratio * best_worst)
            in[i] = false;
          left += in[i] ? 1 : 0;
        }
        if (left == 1) break;
      }
      for (std::size_t i = 0; i < cand.size(); ++i)
        ct.paths.push_back({cand[i], median(ms[i]), int(ms[i].size())});
      // The fastest median wins, but the widest path (what runs without a table) keeps its
      // place unless another is faster by more than kDispatchTieFraction: a near tie is noise.
      const PathTiming& fastest = *std::min_element(
          ct.paths.begin(), ct.paths.end(),
          [](const PathTiming& a, const PathTiming& b) { return a.median_ms < b.median_ms; });
      ct.winner = ct.paths.front().median_ms <= fastest.median_ms * (1 + kDispatchTieFraction)
                      ? ct.paths.front().path
                      : fastest.path;
      out.classes.push_back(ct);
    }
  }
  std::sort(out.classes.begin(), out.classes.end(),
            [](const ClassTiming& a, const ClassTiming& b) { return a.cls < b.cls; });
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace llmbench
