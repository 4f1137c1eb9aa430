// What one benchmark case measured (raw samples) and what is derived from it (docs/metrics.md
// defines every field: formula, units, where the clocks start and stop).
// Derivation is pure arithmetic on samples and analytic counts, so it is tested with exact
// values; timing itself happens in bench_case.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/energy.h"
#include "engine/bench/stats.h"
#include "engine/model/config.h"

namespace llmbench {

// One measured repetition: prefill, then max_new_tokens - 1 decode steps.
struct RepSample {
  std::int64_t ttft_ns = 0;                // prefill submission -> first tokens on the host
  std::vector<std::int64_t> decode_ns;     // one per decode step
  // With an energy meter (energy.h): the counter across the prefill and across all the decode
  // steps; nullopt when no meter ran, a read failed, or there were no decode steps.
  std::optional<EnergySpan> prefill_energy, decode_energy;
  std::int64_t e2e_ns() const;             // ttft_ns + sum(decode_ns)
};

// The hardware limits MBU and MFU divide by, and where they came from.
struct Peaks {
  double bandwidth_gbps = 0;  // GB/s (1e9 bytes/s): the roofline's read (cpu) / copy (cuda) figure
  double tflops = 0;          // 1e12 FLOP/s: the GEMM peak of the dtype these peaks are for
  std::string source;         // "measured (roofline cache ...)" or "--peak-bw-gbps/--peak-tflops"
  bool bandwidth_given = false;  // --peak-bw-gbps: MBU divides by it, not by the case's probe
  bool tflops_given = false;     // --peak-tflops: MFU divides by it, not by the case's probe
  // Every dtype's GEMM peak the roofline measured (or --peak-tflops for all), 1e12 FLOP/s:
  // what a stored MFU of any dtype divided by (cpu: fp32 bf16 fp16 int8 int4; cuda: fp32 bf16
  // fp16).
  std::map<DType, double> gemm_tflops;

  // These peaks for a case of `dtype`: tflops = gemm_tflops[dtype] when measured.
  Peaks for_dtype(DType dtype) const;
};



// Analytic work of a case. FLOPs count what the engine executes (a multiply-add is 2 FLOPs).
struct CaseCost {
  std::int64_t prefill_flops = 0;             // see prefill_flops()
  std::vector<std::int64_t> decode_bytes;     // bytes read by each decode step
  // Tokens of one repetition (0: batch x prompt_len, batch x max_new_tokens and batch per
  // decode step, the static case). A ragged case sets them from its drawn lengths.
  std::int64_t prompt_tokens = 0;             // prompt tokens prefilled
  std::int64_t generated_tokens = 0;          // tokens generated (first tokens included)
  std::vector<int> decode_rows;               // sequences advanced by each decode step
};

// 2 * (layer matmul params) * B * P      -- q,k,v,o,gate,up,down for every prompt token
// + 2 * vocab * dim * B                  -- LM head, last position of each sequence only
// + 2 * n_layers * B * n_heads * head_dim * P * (P + 1)
//                                        -- causal attention: q.k and p.v over t+1 keys
std::int64_t prefill_flops(const ModelConfig& c, int batch, int prompt_len);
// Weight bytes one decode step reads (ModelConfig::decode_weight_bytes) plus the KV cache it
// reads: 2 (k and v) * n_layers * B * kv_dim * (past + 1) * kv_elem_bytes (4: the fp32 cache,
// whatever the weights' dtype; 2 with --kv-cache-dtype fp16).
std::int64_t decode_step_bytes(const ModelConfig& c, int batch, int past, DType dtype,
                               int kv_elem_bytes = 4);
CaseCost case_cost(const ModelConfig& c, int batch, int prompt_len, int max_new_tokens,
                   DType dtype, int kv_elem_bytes = 4);
// A ragged batch: sequence i has prompt_lens[i] prompt tokens and generates output_lens[i]
// tokens; all prefill in one step, then decode step k (1-based) advances every sequence with
// output_lens[i] > k, reading its k/v of positions [0, prompt_lens[i] + k).
//   prefill_flops  = sum_i prefill_flops(c, 1, prompt_lens[i])
//   decode_bytes_k = decode_weight_bytes(rows_k) + 2 * n_layers * kv_dim * 4 * sum_i (P_i + k)
CaseCost ragged_case_cost(const ModelConfig& c, const std::vector<int>& prompt_lens,
                          const std::vector<int>& output_lens, DType dtype,
                          int kv_elem_bytes = 4);

// Derived figures. std::nullopt means "not applicable" (no decode step when
// max_new_tokens == 1), never 0.
struct CaseMetrics {
  int repetitions = 0;                      // measured repetitions (n of every TTFT/e2e figure)
  int tpot_samples = 0;                     // decode steps behind the TPOT figures (n x steps)
  // The samples of each latency, ms, with mean, stdev and any percentile (the field list
  // prints the statistics of tools/store/result_fields.h's kStatistics from them).
  SampleStats ttft_ms, e2e_ms;              // one sample per repetition
  std::optional<SampleStats> tpot_ms;       // one per decode step; none with one new token
  double prefill_tok_s = 0;                 // prompt tokens / median TTFT
  std::optional<double> decode_tok_s;       // mean sequences per decode step / mean TPOT
  double throughput_tok_s = 0;              // generated tokens / median e2e
  double mfu = 0;                           // prefill FLOPs / median TTFT / peak FLOP/s
  std::optional<double> mbu;                // sum decode bytes / sum decode time / peak B/s
  std::optional<double> decode_gbps;        // the achieved bandwidth behind MBU
  double prefill_tflops = 0;                // achieved FLOP/s behind MFU, in 1e12
};

CaseMetrics compute_metrics(int batch, int prompt_len, int max_new_tokens,
                            const CaseCost& cost, const std::vector<RepSample>& samples,
                            const Peaks& peaks);

// The roofs measured beside one case (engine/bench/read_probe.h, compute_probe.h) and the
// denominators its MBU and MFU used (docs/metrics.md, "The roofs beside each case").
struct CaseRoof {
  std::optional<double> read_gbps_before, read_gbps_after;  // the probe; nullopt: none ran
  double reference_gbps = 0;   // the run's bandwidth peak (roofline cache or --peak-bw-gbps)
  double mbu_peak_gbps = 0;    // MBU's denominator: max(before, after), or the reference when
                               // no probe ran or --peak-bw-gbps was given
  // The compute probe (the case dtype's GEMM) right before and after the case, 1e12 FLOP/s.
  std::optional<double> gemm_tflops_before, gemm_tflops_after;
  double reference_tflops = 0;  // the case dtype's cached GEMM peak (or --peak-tflops)
  double mfu_peak_tflops = 0;   // MFU's denominator: max(reference, before, after), or the
                                // reference when no probe ran or --peak-tflops was given
};

// A probe and the reference, or the probe before and after, differing by more than this
// fraction are flagged (roof_check).
inline constexpr double kRoofTolerance = 0.10;

// Fills the roof of a case whose read probes read `before` and `after` GB/s and whose compute
// probes reached `gemm_before` and `gemm_after` TFLOP/s (nullopt: no probe), and divides its
// MBU by roof.mbu_peak_gbps and its MFU by roof.mfu_peak_tflops.
CaseRoof apply_case_roof(CaseMetrics& m, const Peaks& peaks, std::optional<double> before,
                         std::optional<double> after,
                         std::optional<double> gemm_before = std::nullopt,
                         std::optional<double> gemm_after = std::nullopt);

// True when the compute probe beat the cached GEMM peak by more than kRoofTolerance: the cache
// was measured low (a busy machine) and every MFU dividing by it alone would be too high.
bool compute_peak_stale(const CaseRoof& r);

// "ok", or every finding joined by "; ": "probe -27% vs roofline" (the larger read probe against
// the reference), "probe moved +15%" (after against before), "GEMM probe +90% vs cached peak"
// (the compute probe beat the cache: the cache is stale), "MFU 1.83 > 1" / "MBU 1.10 > 1" (a
// utilisation above 1 is never a plain number: a denominator is wrong). nullopt when no probe
// ran and no utilisation is above 1.
std::optional<std::string> roof_check(const CaseRoof& r, const CaseMetrics& m);

// What a user does about a roof_check that names a utilisation above 1 or a stale cached peak;
// empty when it names neither.
std::string roof_check_advice(const std::string& check);

}  // namespace llmbench
