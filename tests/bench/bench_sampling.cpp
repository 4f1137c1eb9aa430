// What choosing the next token costs per engine step, on the host, over a 32000-entry vocabulary
// (Llama 2 / TinyLlama) at batch 1 and 16: the engine's greedy argmax (cpu::argmax_rows, the
// ISA it dispatched to is in the context line "cpu_isa") against the sampler of
// engine/serving/sampler.h with temperature 0.8 + top_k 50 + top_p 0.95 (a typical client's),
// with top_p 0.95 alone (every token sorted), and the log-probabilities of 5 top tokens.
// Every row is its own request (its own seed and draw), as the scheduler runs them.
// Not a test: the sampler's correctness lives in tests/engine/test_sampler.cpp.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/serving/sampler.h"
#include "kernels/cpu/argmax.h"
#include "kernels/cpu/cpu_isa.h"

namespace llmbench {
namespace {

constexpr int kVocab = 32000;

// Logits shaped like a language model's: mostly noise, a few clear favourites.
std::vector<float> logits(int rows) {
  std::mt19937 g(7);
  std::normal_distribution<float> n(0.0f, 2.0f);
  std::vector<float> l(std::size_t(rows) * kVocab);
  for (float& x : l) x = n(g);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < 8; ++k) l[std::size_t(r) * kVocab + std::size_t(g() % kVocab)] += 8.0f;
  return l;
}

void rows_per_second(benchmark::State& state, int rows) {
  state.SetItemsProcessed(state.iterations() * rows);  // items: sampled rows (tokens)
}

void BM_GreedyArgmax(benchmark::State& state) {
  const int rows = int(state.range(0));
  const std::vector<float> l = logits(rows);
  std::vector<std::int32_t> out(static_cast<std::size_t>(rows), 0);
  for (auto _ : state) {
    cpu::argmax_rows(out.data(), l.data(), rows, kVocab);
    benchmark::DoNotOptimize(out.data());
  }
  rows_per_second(state, rows);
}

void sample_rows(benchmark::State& state, const SamplingParams& p) {
  const int rows = int(state.range(0));
  const std::vector<float> l = logits(rows);
  Sampler sampler;
  std::uint64_t index = 0;
  for (auto _ : state) {
    for (int r = 0; r < rows; ++r) {
      const std::int32_t t = sampler.sample(l.data() + std::size_t(r) * kVocab, kVocab, p,
                                            sampling_uniform(std::uint64_t(r), index));
      benchmark::DoNotOptimize(t);
    }
    ++index;
  }
  rows_per_second(state, rows);
}

void BM_SampleTopKTopP(benchmark::State& state) {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 50;
  p.top_p = 0.95f;
  sample_rows(state, p);
}

void BM_SampleTopPOnly(benchmark::State& state) {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_p = 0.95f;
  sample_rows(state, p);
}

void BM_Logprobs5(benchmark::State& state) {
  const int rows = int(state.range(0));
  const std::vector<float> l = logits(rows);
  for (auto _ : state)
    for (int r = 0; r < rows; ++r) {
      SampledLogprobs lp = logprobs_of(l.data() + std::size_t(r) * kVocab, kVocab, 0, 5);
      benchmark::DoNotOptimize(lp.logprob);
    }
  rows_per_second(state, rows);
}

BENCHMARK(BM_GreedyArgmax)->Arg(1)->Arg(16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleTopKTopP)->Arg(1)->Arg(16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SampleTopPOnly)->Arg(1)->Arg(16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Logprobs5)->Arg(1)->Arg(16)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace llmbench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("cpu_isa", llmbench::cpu::cpu_isa_name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
