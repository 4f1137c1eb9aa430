// The pure pieces of `llmbench load`'s operations side: the Prometheus text parser (names,
// labels, escapes, comments, special values, malformed lines refused one by one), the SLO
// frontier search against a known knee, --sweep slo's bad input, the live progress line, the
// usage token means, and vLLM's result object with exact values.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "kernels/common/error.h"
#include "tools/load/load_metrics.h"
#include "tools/load/load_plan.h"
#include "tools/load/load_progress.h"
#include "tools/load/metrics_scrape.h"
#include "tools/load/prometheus_text.h"
#include "tools/load/slo_sweep.h"
#include "tools/load/vllm_json.h"

namespace llmbench {
namespace {

TEST(PrometheusText, ParsesNamesLabelsValuesAndComments) {
  const std::string text =
      "# HELP vllm:num_requests_running Number of requests running.\n"
      "# TYPE vllm:num_requests_running gauge\n"
      "vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 3.0\n"
      "# a free comment\n"
      "\n"
      "  tgi_queue_size 7 1700000000123\n"
      "http_requests_total{method=\"post\",code=\"200\",} 1027\n"
      "llamacpp:kv_cache_usage_ratio\t0.25\r\n"
      "x_nan NaN\n"
      "x_inf{a=\"b\"} +Inf\n"
      "x_minf -Inf\n"
      "x_exp 1.5e-3\n"
      "empty_labels{} 1\n"
      // Any case, as Prometheus reads it (issue 43: llama-server writes "inf").
      "y_inf inf\n"
      "y_minf -INF\n"
      "y_nan nan\n"
      "y_infinity Infinity\n";
  const PromText t = parse_prometheus_text(text);
  EXPECT_TRUE(t.rejected.empty()) << t.rejected.front().reason;
  ASSERT_EQ(t.samples.size(), 13u);
  EXPECT_EQ(t.samples[9].value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.samples[10].value, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.samples[11].value));
  EXPECT_EQ(t.samples[12].value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.type.at("vllm:num_requests_running"), "gauge");
  EXPECT_EQ(t.help.at("vllm:num_requests_running"), "Number of requests running.");
  const PromSample& a = t.samples[0];
  EXPECT_EQ(a.name, "vllm:num_requests_running");
  ASSERT_EQ(a.labels.size(), 2u);
  EXPECT_EQ(a.labels[1].first, "engine");
  EXPECT_EQ(a.labels[1].second, "0");
  EXPECT_EQ(a.value, 3.0);
  EXPECT_FALSE(a.timestamp_ms);
  EXPECT_EQ(t.samples[1].name, "tgi_queue_size");
  EXPECT_EQ(t.samples[1].value, 7);
  EXPECT_EQ(*t.samples[1].timestamp_ms, 1700000000123);
  EXPECT_EQ(t.samples[2].labels.size(), 2u);  // trailing comma allowed
  EXPECT_EQ(t.samples[3].value, 0.25);        // tab separator, CRLF line end
  EXPECT_TRUE(std::isnan(t.samples[4].value));
  EXPECT_EQ(t.samples[5].value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.samples[6].value, -std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(t.samples[7].value, 1.5e-3);
  EXPECT_TRUE(t.samples[8].labels.empty());
}

TEST(PrometheusText, UnescapesLabelValuesAndHelpAndKeysSeriesByLabelName) {
  const std::string text =
      "# HELP m A \\\\ backslash\\nand a newline\n"
      "m{path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",nl=\"a\\nb\"} 1\n"
      "m{q=\"x\",b=\"y\"} 2\n";
  const PromText t = parse_prometheus_text(text);
  ASSERT_TRUE(t.rejected.empty()) << t.rejected.front().reason;
  EXPECT_EQ(t.help.at("m"), "A \\ backslash\nand a newline");
  ASSERT_EQ(t.samples.size(), 2u);
  EXPECT_EQ(t.samples[0].labels[0].second, "C:\\dir");
  EXPECT_EQ(t.samples[0].labels[1].second, "say \"hi\"");
  EXPECT_EQ(t.samples[0].labels[2].second, "a\nb");
  // Sorted by label name, escaped again: the key round-trips to the same text.
  EXPECT_EQ(series_key(t.samples[0]), "m{nl=\"a\\nb\",path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\"}");
  EXPECT_EQ(series_key(t.samples[1]), "m{b=\"y\",q=\"x\"}");
  PromSample bare;
  bare.name = "up";
  EXPECT_EQ(series_key(bare), "up");
}

TEST(PrometheusText, RefusesMalformedLinesOneByOneAndKeepsTheRest) {
  const std::string text =
      "good_a 1\n"
      "this is not a metric\n"           // 2: value 'is' then junk
      "9starts_with_digit 1\n"           // 3
      "no_value\n"                       // 4
      "bad_value{} abc\n"                // 5
      "unclosed{a=\"x} 1\n"              // 6
      "missing_eq{a\"x\"} 1\n"           // 7
      "bad_escape{a=\"\\t\"} 1\n"        // 8
      "dup{a=\"1\",a=\"2\"} 1\n"         // 9
      "# TYPE t sometype\n"              // 10
      "ts_bad 1 notatime\n"              // 11
      "hex 0x10\n"                       // 12
      "good_b{k=\"v\"} 2\n";
  const PromText t = parse_prometheus_text(text);
  ASSERT_EQ(t.samples.size(), 2u);
  EXPECT_EQ(t.samples[0].name, "good_a");
  EXPECT_EQ(t.samples[1].name, "good_b");
  ASSERT_EQ(t.rejected.size(), 11u);
  std::vector<int> lines;
  for (const auto& r : t.rejected) lines.push_back(r.line);
  EXPECT_EQ(lines, (std::vector<int>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_NE(t.rejected[3].reason.find("line 5: expected a number"), std::string::npos)
      << t.rejected[3].reason;
  EXPECT_NE(t.rejected[5].reason.find("expected '='"), std::string::npos) << t.rejected[5].reason;
  EXPECT_NE(t.rejected[8].reason.find("unknown metric type"), std::string::npos);
}

TEST(ScrapeLog, KeepsOneSeriesPerKeyWithItsFamilyType) {
  ScrapeLog log;
  const auto t0 = std::chrono::steady_clock::now();
  log.add("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_sum 3\nbroken line here\n", t0);
  log.add("h_sum 4\nh_bucket{le=\"1\"} 5\n", t0 + std::chrono::milliseconds(500));
  ASSERT_EQ(log.series.size(), 2u);
  EXPECT_EQ(log.series[0], "h_bucket{le=\"1\"}");
  EXPECT_EQ(log.metric[1], "h_sum");
  EXPECT_EQ(log.type[0], "histogram");
  EXPECT_EQ(log.type[1], "histogram");  // _sum belongs to the family h
  ASSERT_EQ(log.samples.size(), 4u);
  EXPECT_EQ(log.samples[2].series, 1);
  EXPECT_EQ(log.samples[2].value, 4);
  EXPECT_EQ(log.rejected_lines, 1);
  EXPECT_NE(log.first_problem.find("line 4"), std::string::npos);
  EXPECT_EQ(metrics_url("auto", "http://127.0.0.1:9"), "http://127.0.0.1:9/metrics");
  EXPECT_EQ(metrics_url("", "http://127.0.0.1:9"), "");
  EXPECT_THROW(metrics_url("ftp://x", "http://127.0.0.1:9"), BadInput);
}

// A server whose share of good requests is 1 up to a knee and 0 above: the search's frontier
// is within the tolerance below the knee and the bracket holds it.
SloFrontier search_knee(double knee, double throughput, const SloSearchOptions& o) {
  return search_slo_frontier(o, [&](double rate, const std::string&) {
    const double good = rate <= knee ? 1.0 : 0.0;
    return std::optional(std::make_pair(good, std::min(rate, throughput)));
  });
}

TEST(SloSweep, FindsAKnownKneeWithinTheTolerance) {
  // A knee far below the throughput takes more halvings: a larger level bound for those.
  for (double knee : {3.0, 37.0, 40.0, 95.0, 150.0}) {
    const SloFrontier f = search_knee(knee, 100.0, SloSearchOptions{0.9, 0.1, 14});
    ASSERT_TRUE(f.rate) << knee;
    ASSERT_TRUE(f.failed_rate) << knee;
    EXPECT_TRUE(f.converged) << f.note;
    EXPECT_LE(*f.rate, knee);
    EXPECT_GT(*f.failed_rate, knee);
    EXPECT_LE(*f.failed_rate - *f.rate, 0.1 * *f.failed_rate);
    EXPECT_GE(*f.rate, knee * 0.9) << knee;
    EXPECT_LE(int(f.probes.size()), knee < 10 ? 14 : 10);
    EXPECT_EQ(f.probes.front().role, "throughput");
    EXPECT_TRUE(std::isinf(f.probes.front().rate));
  }
  // Knee 40 against a throughput of 100: inf, 100, 50, 25, then 37.5, 43.75, 40.625: lo 37.5.
  const SloFrontier f = search_knee(40, 100, SloSearchOptions{});
  std::vector<double> rates;
  for (const auto& p : f.probes) rates.push_back(p.rate);
  EXPECT_EQ(rates, (std::vector<double>{std::numeric_limits<double>::infinity(), 100, 50, 25,
                                        37.5, 43.75, 40.625}));
  EXPECT_EQ(*f.rate, 37.5);
  EXPECT_EQ(*f.failed_rate, 40.625);
}

TEST(SloSweep, BoundedLevelsEveryRateMetAndInterrupted) {
  SloSearchOptions tight{0.9, 0.01, 4};
  const SloFrontier bounded = search_knee(40, 100, tight);
  EXPECT_EQ(bounded.probes.size(), 4u);
  EXPECT_FALSE(bounded.converged);
  EXPECT_NE(bounded.note.find("--sweep-max-levels"), std::string::npos);
  EXPECT_EQ(*bounded.rate, 25);  // the best met so far is still reported
  const SloFrontier all =
      search_knee(std::numeric_limits<double>::infinity(), 100, SloSearchOptions{});
  EXPECT_EQ(all.probes.size(), 1u);
  EXPECT_TRUE(std::isinf(*all.rate));
  const SloFrontier none = search_knee(0.001, 100, SloSearchOptions{0.9, 0.1, 6});
  EXPECT_FALSE(none.rate);
  int calls = 0;
  const SloFrontier stopped = search_slo_frontier(SloSearchOptions{}, [&](double, const std::string&) {
    return ++calls < 3 ? std::optional(std::make_pair(0.0, 10.0)) : std::nullopt;
  });
  EXPECT_EQ(stopped.probes.size(), 2u);
  EXPECT_NE(stopped.note.find("stopped before"), std::string::npos);
  EXPECT_NE(frontier_text(bounded, 0.9, "ttft:100").find("SLO frontier: 25.000 req/s"),
            std::string::npos);
}

TEST(SloSweep, BadInputNamesTheFlag) {
  LoadOptions o;
  o.url = "http://127.0.0.1:8000";
  o.sweep = "slo";
  auto err = [](const LoadOptions& x) -> std::string {
    try {
      make_load_plan(x);
    } catch (const BadInput& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(err(o).find("needs --goodput"), std::string::npos) << err(o);
  o.goodput = "ttft:100";
  EXPECT_EQ(err(o), "");
  const LoadPlan p = make_load_plan(o);
  EXPECT_TRUE(p.slo_sweep);
  EXPECT_TRUE(p.levels.empty());
  EXPECT_EQ(p.slo_level.input_len, 128);
  LoadOptions x = o;
  x.request_rate = "4";
  EXPECT_NE(err(x).find("drop --concurrency and --request-rate"), std::string::npos);
  x = o;
  x.input_len = "32,64";
  EXPECT_NE(err(x).find("one --input-len"), std::string::npos);
  x = o;
  x.goodput_target = 1.5;
  EXPECT_NE(err(x).find("--goodput-target"), std::string::npos);
  x = o;
  x.sweep_tolerance = 0;
  EXPECT_NE(err(x).find("--sweep-tolerance"), std::string::npos);
  x = o;
  x.sweep_max_levels = 2;
  EXPECT_NE(err(x).find("--sweep-max-levels"), std::string::npos);
  x = o;
  x.dataset_name = "jsonl";
  x.dataset_path = "requests.jsonl";
  EXPECT_EQ(err(x), "");
  EXPECT_EQ(make_load_plan(x).slo_level.dataset, "jsonl");
  x.dataset_name = "mooncake";
  x.time_scale = 2;
  EXPECT_NE(err(x).find("--time-scale: --sweep slo"), std::string::npos) << err(x);
  x = o;
  x.sweep = "fast";
  EXPECT_NE(err(x).find("--sweep: expected slo"), std::string::npos);
  x = o;
  x.metrics_interval_ms = 5;
  EXPECT_NE(err(x).find("--metrics-interval-ms"), std::string::npos);
  x = o;
  x.format = "yaml";
  EXPECT_NE(err(x).find("jsonl or vllm-json"), std::string::npos);
}

TEST(LoadProgress, TheLiveLineSaysDoneOkErrorsRateTtftTokensAndEta) {
  LiveCounts c;
  c.started = 12;
  c.finished = 10;
  c.failed = 1;
  c.elapsed_ns = 2'000'000'000;
  c.first_event_ns = {30'000'000, 10'000'000, 20'000'000, 40'000'000};
  c.output_events = 500;
  EXPECT_EQ(live_progress_text("[1/2] c4 in8 out8", 40, 0, c),
            "[1/2] c4 in8 out8: 10/40 done, 9 ok, 1 err | 5.00 req/s | TTFT p50 20.0 ms | "
            "250 tok/s | ETA 0:06");
  LiveCounts empty;
  EXPECT_EQ(live_progress_text("x", 0, 30, empty),
            "x: 0 done, 0 ok, 0 err | -- req/s | TTFT p50 -- | -- tok/s | ETA 0:30");
  std::FILE* f = std::tmpfile();
  {
    LevelProgress quiet("q", 4, 0, true, false, f);
    EXPECT_FALSE(quiet.callback());
    LevelProgress plain("p", 4, 0, false, false, f);
    EXPECT_EQ(plain.interval_s(), 5.0);
    plain.callback()(c);
    LevelProgress tty("t", 4, 0, false, true, f);
    EXPECT_EQ(tty.interval_s(), 0.5);
    tty.callback()(c);
  }
  std::rewind(f);
  char buf[1024] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string out(buf, n);
  EXPECT_EQ(out.rfind("p: 10/4 done", 0), 0u) << out;   // a plain line, newline-terminated
  EXPECT_NE(out.find("\n\r\033[Kt: 10/4 done"), std::string::npos) << out;  // redrawn in place
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");       // and cleared at the end
}

RequestRecord ok_request(int index, std::int64_t send, std::int64_t first, std::int64_t end,
                         int tokens, std::optional<int> usage_prompt) {
  RequestRecord r;
  r.index = index;
  r.ok = true;
  r.input_len = 32;
  r.max_tokens = 4;
  r.send_ns = send;
  r.first_token_ns = first;
  r.end_ns = end;
  r.output_tokens = tokens;
  r.completion_tokens = tokens;
  r.prompt_tokens = usage_prompt;
  // Chunks evenly from first to end.
  for (int k = 0; k < tokens; ++k)
    r.chunks.push_back({first + (tokens > 1 ? (end - first) * k / (tokens - 1) : 0), 1});
  return r;
}

TEST(LoadMetrics, UsageTokensBesideTheRequestedOnes) {
  std::vector<RequestRecord> rs = {ok_request(0, 0, 10'000'000, 40'000'000, 4, 245),
                                   ok_request(1, 0, 20'000'000, 50'000'000, 4, 251)};
  RequestRecord failed;
  failed.index = 2;
  failed.input_len = 32;
  failed.max_tokens = 4;
  failed.error = "HTTP 500";
  rs.push_back(failed);
  const LevelSummary s = summarize_level(rs, {});
  EXPECT_EQ(*s.input_tokens_requested, 32);
  EXPECT_EQ(*s.input_tokens_run, 248);
  EXPECT_EQ(*s.output_tokens_requested, 4);
  EXPECT_EQ(*s.output_tokens_run, 4);
  rs[0].prompt_tokens.reset();
  rs[1].prompt_tokens.reset();
  EXPECT_FALSE(summarize_level(rs, {}).input_tokens_run);
}

TEST(VllmJson, TheResultKeysOfBenchmarkServingWithExactValues) {
  // Two ok requests (TTFT 10 and 20 ms, E2EL 40 and 50 ms, 4 tokens: TPOT 10 ms each, ITL 10
  // ms gaps) and one failure; 100 ms from the first send to the last end.
  std::vector<RequestRecord> rs = {ok_request(0, 0, 10'000'000, 40'000'000, 4, 245),
                                   ok_request(1, 0, 20'000'000, 50'000'000, 4, 251)};
  RequestRecord failed;
  failed.index = 2;
  failed.send_ns = 60'000'000;
  failed.end_ns = 100'000'000;
  failed.error = "HTTP 500: boom";
  failed.input_len = 32;
  rs.push_back(failed);
  LevelSpec level{.mode = LoadMode::kRate, .request_rate = 8, .burstiness = 1,
                  .input_len = 32, .output_len = 4};
  GoodputSlo slo;
  slo.ttft_ms = 15;
  const auto j = vllm_result_json(level, 0, rs, slo, {"openai", "m", "20260101-000000", true, "lbl"});
  EXPECT_EQ(j["backend"], "openai");
  // vllm bench serve's keys: both ok requests' 8 tokens and both requests fall in second 0.
  EXPECT_EQ(j["endpoint_type"], "openai");
  EXPECT_EQ(j["label"], "lbl");
  EXPECT_EQ(j["failed"], 1);
  EXPECT_DOUBLE_EQ(j["max_output_tokens_per_s"].get<double>(), 8.0);
  EXPECT_EQ(j["max_concurrent_requests"], 2);
  EXPECT_EQ(j["start_times"], nlohmann::json({0.0, 0.0, 0.06}));
  EXPECT_EQ(j["model_id"], "m");
  EXPECT_EQ(j["num_prompts"], 3);
  EXPECT_EQ(j["request_rate"], 8.0);
  EXPECT_TRUE(j["max_concurrency"].is_null());
  EXPECT_DOUBLE_EQ(j["duration"].get<double>(), 0.1);
  EXPECT_EQ(j["completed"], 2);
  EXPECT_EQ(j["total_input_tokens"], 496);
  EXPECT_EQ(j["total_output_tokens"], 8);
  EXPECT_DOUBLE_EQ(j["request_throughput"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(j["request_goodput"].get<double>(), 10.0);  // only the 10 ms TTFT is good
  EXPECT_EQ(j["request_goodput"], j["request_goodput:"]);
  EXPECT_DOUBLE_EQ(j["output_throughput"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(j["total_token_throughput"].get<double>(), 5040.0);
  EXPECT_DOUBLE_EQ(j["mean_ttft_ms"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(j["median_ttft_ms"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(j["std_ttft_ms"].get<double>(), 5.0);  // population std, as numpy's
  EXPECT_DOUBLE_EQ(j["p99_ttft_ms"].get<double>(), 19.9);
  EXPECT_DOUBLE_EQ(j["mean_tpot_ms"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["mean_itl_ms"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["std_itl_ms"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["mean_e2el_ms"].get<double>(), 45.0);
  EXPECT_EQ(j["input_lens"], nlohmann::json({245, 251, 32}));
  EXPECT_EQ(j["output_lens"], nlohmann::json({4, 4, 0}));
  EXPECT_DOUBLE_EQ(j["ttfts"][1].get<double>(), 0.02);
  EXPECT_EQ(j["itls"][0].size(), 3u);
  EXPECT_DOUBLE_EQ(j["itls"][0][0].get<double>(), 0.01);
  EXPECT_EQ(j["errors"][2], "HTTP 500: boom");
  EXPECT_EQ(j["generated_texts"].size(), 3u);
  EXPECT_TRUE(j.contains("llmbench_schema_version"));
  // A concurrency level: rate "inf" and max_concurrency the level's.
  LevelSpec c{.mode = LoadMode::kConcurrency, .concurrency = 4, .input_len = 32, .output_len = 4};
  const auto k = vllm_result_json(c, 0, rs, {}, {"openai-chat", "m", "d", false});
  EXPECT_EQ(k["request_rate"], "inf");
  EXPECT_EQ(k["max_concurrency"], 4);
  EXPECT_TRUE(k["request_goodput"].is_null());
  // Peaks over whole seconds: one request's 4 tokens in second 0, another's in second 2.
  std::vector<RequestRecord> spread = {ok_request(0, 0, 10'000'000, 40'000'000, 4, 8),
                                       ok_request(1, 2'100'000'000, 2'110'000'000, 2'140'000'000, 4, 8)};
  const auto p = vllm_result_json(c, 0, spread, {}, {"openai", "m", "d", false, "m"});
  EXPECT_DOUBLE_EQ(p["max_output_tokens_per_s"].get<double>(), 4.0);
  EXPECT_EQ(p["max_concurrent_requests"], 1);
  EXPECT_EQ(p["failed"], 0);
}

}  // namespace
}  // namespace llmbench
