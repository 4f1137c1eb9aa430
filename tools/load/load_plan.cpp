// `llmbench load`'s plan (see load_plan.h).
#include "tools/load/load_plan.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "kernels/common/error.h"
#include "tools/console/flag_values.h"

namespace llmbench {

namespace {

// A finite number, or "inf" when `allow_inf`.
double parse_number(const std::string& flag, const std::string& text, bool allow_inf) {
  if (allow_inf && (text == "inf" || text == "Inf" || text == "INF"))
    return std::numeric_limits<double>::infinity();
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v))
    throw BadInput(flag + ": expected a number" + (allow_inf ? " or inf" : "") + ", got '" +
                   text + "'");
  return v;
}

std::vector<double> parse_positive_list(const std::string& flag, const std::string& text,
                                        bool allow_inf) {
  std::vector<double> out;
  for (const std::string& item : parse_word_list(flag, text)) {
    const double v = parse_number(flag, item, allow_inf);
    if (!(v > 0)) throw BadInput(flag + ": expected numbers > 0, got " + item);
    out.push_back(v);
  }
  return out;
}

std::string number_text(double v) {
  if (std::isinf(v)) return "inf";
  return fmt::format("{:g}", v);
}

void check_seconds(const std::string& flag, double v, bool zero_ok) {
  if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0) || v > 1e6)
    throw BadInput(flag + ": expected seconds in " + (zero_ok ? "[0" : "(0") + ", 1e6], got " +
                   number_text(v));
}

// --sweep slo: one workload (one input and output length, or one dataset; one burstiness) and
// an SLO; the search picks the rates, so neither --request-rate nor --concurrency may be given.
void check_slo_sweep(const LoadOptions& o, const LoadPlan& plan, std::size_t lengths,
                     std::size_t bursts) {
  if (o.sweep != "slo") throw BadInput("--sweep: expected slo, got '" + o.sweep + "'");
  if (!plan.goodput.ttft_ms && !plan.goodput.tpot_ms && !plan.goodput.e2el_ms)
    throw BadInput("--sweep slo: needs --goodput (the SLOs the frontier keeps), e.g. "
                   "--goodput ttft:500,tpot:50");
  if (!o.concurrency.empty() || !o.request_rate.empty())
    throw BadInput("--sweep slo: the search chooses the request rates; drop --concurrency and "
                   "--request-rate");
  if (lengths != 1 || bursts != 1)
    throw BadInput("--sweep slo: give one --input-len, one --output-len and one --burstiness");
  if (!(o.goodput_target > 0 && o.goodput_target <= 1))
    throw BadInput("--goodput-target: expected a share in (0, 1], got " + number_text(o.goodput_target));
  if (!(o.sweep_tolerance >= 0.01 && o.sweep_tolerance < 1))
    throw BadInput("--sweep-tolerance: expected a fraction in [0.01, 1), got " +
                   number_text(o.sweep_tolerance));
  if (o.sweep_max_levels < 3 || o.sweep_max_levels > 50)
    throw BadInput("--sweep-max-levels: expected an integer in [3, 50], got " +
                   std::to_string(o.sweep_max_levels));
  if (o.duration_s > 0)
    throw BadInput("--sweep slo: every level runs --num-requests requests; drop --duration");
  if (o.dataset_name == "mooncake" && o.time_scale != 1)
    throw BadInput("--time-scale: --sweep slo sends the trace's requests at the rates it "
                   "probes (Poisson arrivals, the trace's prompts); drop --time-scale");
}

}  // namespace

GoodputSlo parse_goodput(const std::string& flag, const std::string& text) {
  GoodputSlo g;
  for (const std::string& item : parse_word_list(flag, text)) {
    const auto colon = item.find(':');
    const std::string key = item.substr(0, colon);
    if (colon == std::string::npos)
      throw BadInput(flag + ": expected KEY:MS items (ttft, tpot, e2el), got '" + item + "'");
    const double v = parse_number(flag, item.substr(colon + 1), false);
    if (!(v > 0)) throw BadInput(flag + ": expected a limit > 0 ms, got '" + item + "'");
    std::optional<double>* slot = key == "ttft" ? &g.ttft_ms
                                  : key == "tpot" ? &g.tpot_ms
                                  : key == "e2el" ? &g.e2el_ms
                                                  : nullptr;
    if (!slot)
      throw BadInput(flag + ": unknown metric '" + key + "' (expected ttft, tpot or e2el)");
    if (*slot) throw BadInput(flag + ": '" + key + "' is given twice");
    *slot = v;
  }
  return g;
}

std::string goodput_text(const GoodputSlo& g) {
  std::string s;
  auto add = [&](const char* k, const std::optional<double>& v) {
    if (v) s += (s.empty() ? "" : ",") + std::string(k) + ":" + number_text(*v);
  };
  add("ttft", g.ttft_ms);
  add("tpot", g.tpot_ms);
  add("e2el", g.e2el_ms);
  return s;
}

const char* mode_name(LoadMode m) {
  return m == LoadMode::kConcurrency ? "concurrency" : m == LoadMode::kRate ? "rate" : "trace";
}

std::string LevelSpec::label() const {
  if (mode == LoadMode::kTrace) return "trace x" + number_text(time_scale) + " " + dataset;
  const std::string lengths = dataset.empty() ? " in" + std::to_string(input_len) + " out" +
                                                    std::to_string(output_len)
                                              : " " + dataset;
  std::string s = mode == LoadMode::kConcurrency
                      ? "c" + std::to_string(concurrency)
                      : "r" + number_text(request_rate) +
                            (std::isinf(request_rate) ? "" : " b" + number_text(burstiness));
  return s + lengths;
}

namespace {

// The file-workload flags (dataset.h): which apply to which --dataset-name.
void check_workload_flags(const LoadOptions& o) {
  const std::string& d = o.dataset_name;
  if (d != "random" && d != "sharegpt" && d != "jsonl" && d != "mooncake")
    throw BadInput("--dataset-name: expected random, sharegpt, jsonl or mooncake, got '" + d + "'");
  if (d == "random" && !o.dataset_path.empty())
    throw BadInput("--dataset-path: needs --dataset-name sharegpt, jsonl or mooncake");
  if (d != "random" && o.dataset_path.empty())
    throw BadInput("--dataset-path: required with --dataset-name " + d);
  if (o.multi_turn && d != "sharegpt")
    throw BadInput("--multi-turn: applies to --dataset-name sharegpt (jsonl sessions come from "
                   "session_id)");
  if (d == "mooncake" && (!o.concurrency.empty() || !o.request_rate.empty()))
    throw BadInput("--concurrency/--request-rate: a mooncake trace sends each request at its "
                   "timestamp (use --time-scale, and --max-concurrency to cap)");
  if (!std::isfinite(o.time_scale) || !(o.time_scale > 0) || o.time_scale > 1e6)
    throw BadInput("--time-scale: expected a number in (0, 1e6], got " + number_text(o.time_scale));
  if (o.time_scale != 1 && d != "mooncake")
    throw BadInput("--time-scale: applies to --dataset-name mooncake only");
  if (o.hash_block_size < 1 || o.hash_block_size > (1 << 20))
    throw BadInput("--hash-block-size: expected an integer in [1, 1048576]");
  if (!std::isfinite(o.think_time_ms) || o.think_time_ms < 0 || o.think_time_ms > 3.6e6)
    throw BadInput("--think-time-ms: expected ms in [0, 3600000]");
  if (d != "random" && o.input_len != "128")
    throw BadInput("--input-len: the prompts come from --dataset-path (random workloads only)");
}

// Where the load goes: --url (or a --server-cmd that sets it), --endpoint, and one of
// --concurrency / --request-rate.
void check_target_flags(const LoadOptions& o) {
  if (o.url.empty() && o.server_cmd.find("{port}") == std::string::npos)
    throw BadInput("--url: expected http://HOST:PORT (or a --server-cmd with a {port} "
                   "placeholder, which sets it)");
  if (!o.url.empty() && o.url.rfind("http://", 0) != 0)
    throw BadInput("--url: expected http://HOST:PORT (plain HTTP), got '" + o.url + "'");
  if (o.endpoint != "completions" && o.endpoint != "chat")
    throw BadInput("--endpoint: expected completions or chat, got '" + o.endpoint + "'");
  if (!o.concurrency.empty() && !o.request_rate.empty())
    throw BadInput("--concurrency/--request-rate: give one of them (a level is either a fixed "
                   "number of requests in flight or an arrival rate)");
}

// A level listed twice runs twice and is stored twice under one label: refused.
template <class T>
void refuse_repeats(const std::string& flag, const std::vector<T>& values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[i] == values[j])
        throw BadInput(flag + ": " + fmt::format("{}", values[i]) + " is listed twice");
}

// The list-valued flags a plan expands into levels.
struct LevelLists {
  std::vector<int> concurrency;
  std::vector<double> rates, bursts = {1.0};
  std::vector<int> input_lens, output_lens;  // input 0: the lengths come from a file
};

LevelLists parse_level_lists(const LoadOptions& o, LoadMode mode) {
  LevelLists l;
  if (o.sweep.empty() && mode != LoadMode::kRate && o.burstiness != "1")
    throw BadInput("--burstiness: applies to --request-rate only");
  if (!o.sweep.empty()) {
    l.bursts = parse_positive_list("--burstiness", o.burstiness, false);
  } else if (mode == LoadMode::kConcurrency) {
    l.concurrency =
        parse_int_list("--concurrency", o.concurrency.empty() ? "1" : o.concurrency, 1, 4096);
    refuse_repeats("--concurrency", l.concurrency);
  } else if (mode == LoadMode::kRate) {
    l.rates = parse_positive_list("--request-rate", o.request_rate, true);
    // A rate below one request in 1000 s is no load; one of 1e-300 made the interval infinite
    // (sent at once), 1e-10 a wait of centuries.
    for (double r : l.rates)
      if (!std::isinf(r) && (r < 1e-3 || r > 1e6))
        throw BadInput("--request-rate: expected rates in [0.001, 1000000] requests/s or inf, "
                       "got " + number_text(r));
    refuse_repeats("--request-rate", l.rates);
    l.bursts = parse_positive_list("--burstiness", o.burstiness, false);
  }
  const bool from_file = o.dataset_name != "random";
  l.input_lens =
      from_file ? std::vector<int>{0} : parse_int_list("--input-len", o.input_len, 1, 1 << 20);
  l.output_lens = parse_int_list("--output-len", o.output_len, 1, 1 << 20);
  if (from_file && l.output_lens.size() > 1)
    throw BadInput("--output-len: one value with --dataset-path (the max_tokens of requests "
                   "whose length the file does not give)");
  return l;
}

// The scalar flags: length spreads, counts, timeouts, caps, output format and database.
void check_scalar_flags(const LoadOptions& o, LoadMode mode) {
  if (!std::isfinite(o.input_len_stddev) || o.input_len_stddev < 0)
    throw BadInput("--input-len-stddev: expected a number >= 0");
  if (!std::isfinite(o.output_len_stddev) || o.output_len_stddev < 0)
    throw BadInput("--output-len-stddev: expected a number >= 0");
  if (o.num_requests < 0 || o.num_requests > 10'000'000)
    throw BadInput("--num-requests: expected an integer in [1, 10000000], got " +
                   std::to_string(o.num_requests));
  check_seconds("--duration", o.duration_s, true);
  check_seconds("--connect-timeout", o.connect_timeout_s, false);
  check_seconds("--first-byte-timeout", o.first_byte_timeout_s, false);
  check_seconds("--idle-timeout", o.idle_timeout_s, false);
  check_seconds("--request-timeout", o.request_timeout_s, true);
  check_seconds("--server-timeout", o.server_timeout_s, false);
  if (o.warmup_requests < 0 || o.warmup_requests > 1'000'000)
    throw BadInput("--warmup-requests: expected an integer in [0, 1000000]");
  if (o.max_concurrency < 0 || o.max_concurrency > 100000)
    throw BadInput("--max-concurrency: expected an integer in [0, 100000]");
  if (o.max_concurrency > 0 && mode == LoadMode::kConcurrency && o.sweep.empty())
    throw BadInput("--max-concurrency: applies to --request-rate only (--concurrency is the cap)");
  if (o.format != "table" && o.format != "wide" && o.format != "md" && o.format != "csv" &&
      o.format != "json" && o.format != "jsonl" && o.format != "vllm-json")
    throw BadInput("--format: expected table, wide, md, csv, json, jsonl or vllm-json, got '" +
                   o.format + "'");
  if (o.metrics_interval_ms < 50 || o.metrics_interval_ms > 600000)
    throw BadInput("--metrics-interval-ms: expected an integer in [50, 600000], got " +
                   std::to_string(o.metrics_interval_ms));
  if (!(o.saturation_window_s >= 0.5 && o.saturation_window_s <= 3600))
    throw BadInput(fmt::format("--saturation-window: expected seconds in [0.5, 3600], got {}",
                               o.saturation_window_s));
  if (o.stop_on_saturation && mode != LoadMode::kRate && o.sweep.empty())
    throw BadInput("--stop-on-saturation: applies to --request-rate levels only (the saturation "
                   "guard watches rate levels)");
  if (o.no_stream && o.goodput.find("ttft") != std::string::npos)
    throw BadInput("--goodput: ttft needs streamed answers; --no-stream measures e2el only");
  if (o.no_stream && o.goodput.find("tpot") != std::string::npos)
    throw BadInput("--goodput: tpot needs streamed answers; --no-stream measures e2el only");
  if (o.stop_on_saturation && o.no_stream)
    throw BadInput("--stop-on-saturation: needs streamed answers (the guard watches TTFT); "
                   "drop --no-stream");
  if (!(o.metrics_timeout_s >= 0 && o.metrics_timeout_s <= 600))
    throw BadInput(fmt::format("--metrics-timeout: expected seconds in [0, 600] (0: the "
                               "interval, at least 1 s), got {}", o.metrics_timeout_s));
  if (o.db.empty()) throw BadInput("--db: expected a path");
}

// One level per (input length, output length) and load: a concurrency, or a rate and
// burstiness (a trace needs neither).
void expand_levels(const LoadOptions& o, const LevelLists& lists, LoadPlan& plan) {
  const bool from_file = o.dataset_name != "random";
  int index = 0;
  for (int in : lists.input_lens)
    for (int out : lists.output_lens) {
      auto add = [&](int concurrency, double rate, double burstiness) {
        LevelSpec l;
        l.concurrency = concurrency;
        l.request_rate = rate;
        l.burstiness = burstiness;
        l.time_scale = o.time_scale;
        l.index = index++;
        l.mode = plan.mode;
        l.input_len = in;
        l.output_len = out;
        if (from_file) l.dataset = o.dataset_name;
        plan.levels.push_back(l);
      };
      if (plan.mode == LoadMode::kTrace) {
        add(0, 0, 1);
      } else if (plan.mode == LoadMode::kConcurrency) {
        for (int c : lists.concurrency) add(c, 0, 1);
      } else {
        for (double r : lists.rates)
          for (double b : lists.bursts) {
            // At an infinite rate every request arrives at 0: burstiness changes nothing.
            if (std::isinf(r) && b != lists.bursts.front()) continue;
            add(0, r, b);
          }
      }
    }
}

}  // namespace

LoadPlan make_load_plan(const LoadOptions& o) {
  LoadPlan plan;
  plan.opt = o;
  check_workload_flags(o);
  check_target_flags(o);
  plan.mode = o.dataset_name == "mooncake" ? LoadMode::kTrace
              : o.request_rate.empty()     ? LoadMode::kConcurrency
                                           : LoadMode::kRate;
  const LevelLists lists = parse_level_lists(o, plan.mode);
  check_scalar_flags(o, plan.mode);
  if (!o.goodput.empty()) plan.goodput = parse_goodput("--goodput", o.goodput);
  // A level of "unbounded" requests with --duration is bounded by time; the count is a cap.
  plan.num_requests = o.num_requests > 0 ? o.num_requests : o.duration_s > 0 ? 1'000'000 : 100;

  if (!o.sweep.empty()) {
    check_slo_sweep(o, plan, lists.input_lens.size() * lists.output_lens.size(),
                    lists.bursts.size());
    plan.mode = LoadMode::kRate;
    plan.slo_sweep = true;
    plan.slo_level = LevelSpec{.mode = LoadMode::kRate, .burstiness = lists.bursts.front(),
                               .input_len = lists.input_lens.front(),
                               .output_len = lists.output_lens.front()};
    if (o.dataset_name != "random") plan.slo_level.dataset = o.dataset_name;
    return plan;  // the search places its levels
  }
  expand_levels(o, lists, plan);
  return plan;
}

std::vector<double> arrival_offsets_s(int n, double rate, double burstiness, std::uint64_t seed) {
  std::vector<double> t(std::size_t(std::max(n, 0)), 0.0);
  if (std::isinf(rate) || n <= 1) return t;
  std::mt19937_64 rng(seed);
  // Mean interval 1 / rate: scale theta = 1 / (rate * shape).
  std::gamma_distribution<double> gap(burstiness, 1.0 / (rate * burstiness));
  for (std::size_t i = 1; i < t.size(); ++i) t[i] = t[i - 1] + gap(rng);
  return t;
}

RequestSource::RequestSource(const LevelSpec& level, double input_stddev, double output_stddev,
                             std::uint64_t seed)
    : level_(level), input_stddev_(input_stddev), output_stddev_(output_stddev),
      rng_(seed * 0x9E3779B97F4A7C15ull + std::uint64_t(level.index) + 1) {}

RequestShape RequestSource::next() {
  auto draw = [&](int mean, double sd) {
    if (sd <= 0) return mean;
    std::normal_distribution<double> d(mean, sd);
    return int(std::max(1.0, std::min(double(1 << 20), std::round(d(rng_)))));
  };
  RequestShape r;
  r.input_len = draw(level_.input_len, input_stddev_);
  r.output_len = draw(level_.output_len, output_stddev_);
  std::uniform_int_distribution<std::int32_t> id(kPromptIdMin, kPromptIdMax);
  r.prompt_ids.resize(std::size_t(r.input_len));
  for (auto& x : r.prompt_ids) x = id(rng_);
  return r;
}

std::string synthetic_text(const std::vector<std::int32_t>& ids) {
  static const char* const kWords[] = {
      "the",   "of",    "and",   "to",    "in",    "is",   "that",  "for",   "it",    "as",
      "was",   "with",  "be",    "by",    "on",    "not",  "he",    "this",  "are",   "or",
      "his",   "from",  "at",    "which", "but",   "have", "an",    "had",   "they",  "you",
      "were",  "their", "one",   "all",   "we",    "can",  "her",   "has",   "there", "been",
      "if",    "more",  "when",  "will",  "would", "who",  "so",    "no",    "time",  "world"};
  constexpr std::size_t kN = sizeof(kWords) / sizeof(kWords[0]);
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ' ';
    s += kWords[std::size_t(ids[i]) % kN];
  }
  return s;
}

}  // namespace llmbench
