// `llmbench load`'s options as typed, and the plan they expand to: one level per combination of
// the list flags (--concurrency or --request-rate, --burstiness, --input-len, --output-len),
// like run's cartesian sweep, with every value checked (BadInput naming the flag, exit 2).
// Also the arrival process (gamma intervals, Poisson at burstiness 1) and the per-request
// lengths and prompts, all drawn from --seed. Pure: no I/O.
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace llmbench {

// --goodput ttft:MS,tpot:MS,e2el:MS: a request is good when it succeeded and meets every
// limit given (docs/metrics.md).
struct GoodputSlo {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};
GoodputSlo parse_goodput(const std::string& flag, const std::string& text);
// "ttft:200,tpot:50" (the limits given, in that order); "" when none.
std::string goodput_text(const GoodputSlo& g);

struct LoadOptions {
  std::string url;                  // http://HOST:PORT (with or without a path)
  std::string model;                // "" : the first of GET /v1/models
  std::string endpoint = "completions";  // completions | chat
  std::string concurrency;          // LIST (default 1 when neither it nor --request-rate)
  std::string request_rate;         // LIST of requests/s, or inf
  std::string burstiness = "1";     // LIST; gamma shape (1: Poisson)
  int num_requests = 0;             // per level; 0: 100, or unbounded with --duration
  double duration_s = 0;            // per level; 0: no time limit
  std::string input_len = "128";    // LIST of prompt tokens
  double input_len_stddev = 0;
  std::string output_len = "128";   // LIST of max_tokens
  double output_len_stddev = 0;
  bool ignore_eos = false;
  int warmup_requests = 0;          // per level, unmeasured and not stored
  int max_concurrency = 0;          // rate mode: in-flight cap (0: none)
  std::string label;                // names the server in the serving table ("" : the model)
  std::uint64_t seed = 0;
  std::string goodput;
  std::string db = "llmbench.db";
  std::string format = "table";
  std::string server_cmd;
  double server_timeout_s = 300;    // --server-cmd: how long /health may take to answer 200
  double connect_timeout_s = 10;
  double first_byte_timeout_s = 600;
  double idle_timeout_s = 60;
  double request_timeout_s = 0;     // a whole request's deadline; 0: 300 s + 1 s per max_tokens
  bool quiet = false;
  // Workloads from files (dataset.h; docs/serving.md "Datasets").
  std::string dataset_name = "random";  // random | sharegpt | jsonl | mooncake
  std::string dataset_path;
  std::string tokenizer;            // DIR (or file) with tokenizer.json or tokenizer.model
  bool multi_turn = false;          // sharegpt: a conversation is one session
  bool use_server_responses = false;  // sessions: the server's replies as history
  double think_time_ms = 0;         // sessions: wait before each later turn (a file's delay_ms wins)
  double time_scale = 1;            // mooncake: due time = timestamp x time_scale
  int hash_block_size = 512;        // mooncake: tokens per hash_ids block
  // --sweep slo (slo_sweep.h): the SLO frontier search places rate levels itself.
  std::string sweep;                // "" (the list flags' product) | slo
  double goodput_target = 0.9;      // share of good requests the frontier must keep
  double sweep_tolerance = 0.1;     // relative width at which the bisection stops
  int sweep_max_levels = 10;
  // --server-metrics (metrics_scrape.h): "" off, auto (the server's /metrics) or a URL.
  std::string server_metrics;
  int metrics_interval_ms = 500;
  double metrics_timeout_s = 0;     // each scrape's limit; 0: max(1 s, the interval)
  // The saturation guard of rate levels (saturation.h; docs/serving.md "Saturation").
  double saturation_window_s = 10;
  bool stop_on_saturation = false;
  // --no-stream: one JSON answer per request; E2EL and usage tokens only (docs/serving.md).
  bool no_stream = false;
};

// kTrace: one level that sends each request of a trace at its timestamp (x --time-scale).
enum class LoadMode { kConcurrency, kRate, kTrace };
// "concurrency" | "rate" | "trace"
const char* mode_name(LoadMode m);

struct LevelSpec {
  int index = 0;                 // 0-based in the plan
  LoadMode mode = LoadMode::kConcurrency;
  int concurrency = 0;           // kConcurrency: requests in flight
  double request_rate = 0;       // kRate: requests/s (infinity: all at once)
  double burstiness = 1;         // kRate: gamma shape
  int input_len = 0, output_len = 0;  // random workload; 0 and the default max_tokens for files
  std::string dataset;           // "" (random), or the --dataset-name of a file workload
  double time_scale = 1;         // kTrace
  // "c4 in128 out128", "r8 b1 in128 out128", "rinf in128 out128"; for a file workload the
  // dataset name instead of the lengths ("c4 sharegpt"); "trace x1 mooncake".
  std::string label() const;
};

struct LoadPlan {
  LoadOptions opt;
  LoadMode mode = LoadMode::kConcurrency;
  std::vector<LevelSpec> levels;
  GoodputSlo goodput;
  int num_requests = 0;          // per level (the resolved count; a cap when --duration is set)
  bool slo_sweep = false;        // --sweep slo: `levels` is empty; the search makes them
  LevelSpec slo_level;           // --sweep slo: every level's lengths and burstiness
};

// Checks every value (BadInput "--flag: expected ..., got ...") and expands the levels:
// input_len outermost, then output_len, then concurrency or rate, then burstiness. A file
// workload has no length levels (one --output-len: the default max_tokens); a trace one level.
LoadPlan make_load_plan(const LoadOptions& o);

// Arrival offsets in seconds of `n` requests at `rate` requests/s: the first at 0, then
// intervals drawn from a gamma distribution of shape `burstiness` and mean 1 / rate (shape 1:
// exponential, a Poisson process; below 1 burstier, above 1 more regular: the intervals'
// squared coefficient of variation is 1 / burstiness). rate = infinity: all at 0.
std::vector<double> arrival_offsets_s(int n, double rate, double burstiness, std::uint64_t seed);

// One request of a level: its lengths and prompt, drawn from the level's own stream.
struct RequestShape {
  int input_len = 0;    // prompt tokens sent (token-id prompts) or aimed at (text prompts)
  int output_len = 0;   // max_tokens
  std::vector<std::int32_t> prompt_ids;
};

// Deterministic per (seed, level index): lengths ~ normal(mean, stddev) rounded, at least 1;
// prompt ids uniform in [kPromptIdMin, kPromptIdMax] (valid for any vocabulary of 256+ ids,
// clear of the low ids tokenizers reserve for special tokens).
class RequestSource {
 public:
  RequestSource(const LevelSpec& level, double input_stddev, double output_stddev,
                std::uint64_t seed);
  RequestShape next();

  static constexpr std::int32_t kPromptIdMin = 16, kPromptIdMax = 255;

 private:
  LevelSpec level_;
  double input_stddev_, output_stddev_;
  std::mt19937_64 rng_;
};

// Synthetic text of about `tokens` tokens (words of common English, one token each in the usual
// BPE vocabularies); the server's usage says how many it really was. Deterministic from `ids`.
std::string synthetic_text(const std::vector<std::int32_t>& ids);

}  // namespace llmbench
