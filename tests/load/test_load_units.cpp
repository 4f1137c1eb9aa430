// The pure pieces of `llmbench load`: the plan (flags, levels, bad input naming the flag), the
// arrival process on a fixed seed, SSE splitting and stream parsing, the request body, and the
// serving metrics with exact values.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "kernels/common/error.h"
#include "tools/load/load_driver.h"
#include "tools/load/load_metrics.h"
#include "tools/load/load_plan.h"
#include "tools/load/server_process.h"
#include "tools/load/stream_parse.h"

namespace llmbench {
namespace {

LoadOptions base_options() {
  LoadOptions o;
  o.url = "http://127.0.0.1:8000";
  return o;
}

std::string bad_input(const LoadOptions& o) {
  try {
    make_load_plan(o);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "";
}

TEST(LoadPlan, ListsSweepAsACartesianProduct) {
  LoadOptions o = base_options();
  o.concurrency = "1,4";
  o.input_len = "32,64";
  o.output_len = "16";
  const LoadPlan p = make_load_plan(o);
  ASSERT_EQ(p.levels.size(), 4u);
  EXPECT_EQ(p.levels[0].label(), "c1 in32 out16");
  EXPECT_EQ(p.levels[1].label(), "c4 in32 out16");
  EXPECT_EQ(p.levels[3].label(), "c4 in64 out16");
  EXPECT_EQ(p.levels[3].index, 3);
  EXPECT_EQ(p.num_requests, 100);
}

TEST(LoadPlan, RateLevelsWithBurstinessAndInf) {
  LoadOptions o = base_options();
  o.request_rate = "2,inf";
  o.burstiness = "0.5,1";
  o.duration_s = 3;
  const LoadPlan p = make_load_plan(o);
  ASSERT_EQ(p.levels.size(), 3u);  // inf once: burstiness changes nothing there
  EXPECT_EQ(p.levels[0].label(), "r2 b0.5 in128 out128");
  EXPECT_EQ(p.levels[1].label(), "r2 b1 in128 out128");
  EXPECT_EQ(p.levels[2].label(), "rinf in128 out128");
  EXPECT_TRUE(std::isinf(p.levels[2].request_rate));
  EXPECT_EQ(p.num_requests, 1'000'000);  // --duration bounds it
}

TEST(LoadPlan, BadInputNamesTheFlag) {
  struct Case {
    void (*set)(LoadOptions&);
    const char* starts;
  };
  const Case cases[] = {
      {[](LoadOptions& o) { o.concurrency = "1,0"; }, "--concurrency: expected an integer in [1, 4096]"},
      {[](LoadOptions& o) { o.concurrency = "1,,4"; }, "--concurrency: expected a comma-separated list"},
      {[](LoadOptions& o) { o.request_rate = "-1"; }, "--request-rate: expected numbers > 0"},
      {[](LoadOptions& o) { o.request_rate = "fast"; }, "--request-rate: expected a number or inf"},
      {[](LoadOptions& o) { o.concurrency = "2"; o.request_rate = "2"; }, "--concurrency/--request-rate"},
      {[](LoadOptions& o) { o.burstiness = "2"; }, "--burstiness: applies to --request-rate only"},
      {[](LoadOptions& o) { o.request_rate = "1"; o.burstiness = "0"; }, "--burstiness: expected numbers > 0"},
      {[](LoadOptions& o) { o.endpoint = "embeddings"; }, "--endpoint: expected completions or chat"},
      {[](LoadOptions& o) { o.url = "https://x"; }, "--url: expected http://HOST:PORT"},
      {[](LoadOptions& o) { o.url = ""; }, "--url: expected http://HOST:PORT (or a --server-cmd"},
      {[](LoadOptions& o) { o.input_len = "0"; }, "--input-len: expected an integer in [1,"},
      {[](LoadOptions& o) { o.output_len = "x"; }, "--output-len: expected an integer"},
      {[](LoadOptions& o) { o.goodput = "ttft:0"; }, "--goodput: expected a limit > 0 ms"},
      {[](LoadOptions& o) { o.goodput = "ttfb:10"; }, "--goodput: unknown metric 'ttfb'"},
      {[](LoadOptions& o) { o.goodput = "ttft:1,ttft:2"; }, "--goodput: 'ttft' is given twice"},
      {[](LoadOptions& o) { o.duration_s = -1; }, "--duration: expected seconds"},
      {[](LoadOptions& o) { o.idle_timeout_s = 0; }, "--idle-timeout: expected seconds in (0"},
      {[](LoadOptions& o) { o.format = "xml"; }, "--format: expected table, wide, md, csv, json, jsonl or vllm-json"},
      {[](LoadOptions& o) { o.max_concurrency = 3; }, "--max-concurrency: applies to --request-rate only"},
      {[](LoadOptions& o) { o.num_requests = -2; }, "--num-requests: expected"},
  };
  for (const Case& c : cases) {
    LoadOptions o = base_options();
    c.set(o);
    const std::string msg = bad_input(o);
    EXPECT_EQ(msg.rfind(c.starts, 0), 0u) << "got: " << msg;
  }
  LoadOptions served = base_options();
  served.url = "";
  served.server_cmd = "llmbench serve --model tiny --port {port}";
  EXPECT_EQ(bad_input(served), "");  // {port} sets the URL
}

TEST(LoadPlan, GoodputParsesAndPrints) {
  const GoodputSlo g = parse_goodput("--goodput", "e2el:5000,ttft:250.5");
  EXPECT_EQ(g.ttft_ms, 250.5);
  EXPECT_FALSE(g.tpot_ms);
  EXPECT_EQ(g.e2el_ms, 5000);
  EXPECT_EQ(goodput_text(g), "ttft:250.5,e2el:5000");
}

// Intervals of a gamma process: mean 1 / rate, squared coefficient of variation 1 / shape.
TEST(Arrivals, MeanRateAndDispersionMatchOnAFixedSeed) {
  for (double burstiness : {0.25, 1.0, 4.0}) {
    SCOPED_TRACE(burstiness);
    const int n = 20000;
    const double rate = 8.0;
    const std::vector<double> t = arrival_offsets_s(n, rate, burstiness, 42);
    ASSERT_EQ(t.size(), std::size_t(n));
    EXPECT_EQ(t[0], 0.0);
    double sum = 0, sum2 = 0;
    for (int i = 1; i < n; ++i) {
      const double gap = t[i] - t[i - 1];
      ASSERT_GE(gap, 0.0);
      sum += gap;
      sum2 += gap * gap;
    }
    const double m = sum / (n - 1), var = sum2 / (n - 1) - m * m;
    EXPECT_NEAR((n - 1) / t.back(), rate, 0.03 * rate);       // mean rate within 3%
    EXPECT_NEAR(var / (m * m), 1.0 / burstiness, 0.06 / burstiness);  // CV^2 within 6%
    // Poisson counts: variance / mean of arrivals per 1 s window is 1 at burstiness 1.
  }
  EXPECT_EQ(arrival_offsets_s(5, 3.0, 1.0, 7), arrival_offsets_s(5, 3.0, 1.0, 7));  // seeded
  EXPECT_NE(arrival_offsets_s(5, 3.0, 1.0, 7), arrival_offsets_s(5, 3.0, 1.0, 8));
  for (double x : arrival_offsets_s(10, std::numeric_limits<double>::infinity(), 1.0, 1))
    EXPECT_EQ(x, 0.0);
}

TEST(Arrivals, PoissonCountsHaveVarianceEqualToTheirMean) {
  const double rate = 20.0;
  const std::vector<double> t = arrival_offsets_s(40000, rate, 1.0, 3);
  const int windows = int(t.back());
  std::vector<int> counts(std::size_t(windows), 0);
  for (double x : t)
    if (int(x) < windows) ++counts[std::size_t(x)];
  double s = 0, s2 = 0;
  for (int c : counts) s += c, s2 += double(c) * c;
  const double m = s / windows, var = s2 / windows - m * m;
  EXPECT_NEAR(m, rate, 0.03 * rate);
  EXPECT_NEAR(var / m, 1.0, 0.1);  // index of dispersion of a Poisson process
}

TEST(RequestSource, LengthsAndPromptsAreSeededAndInRange) {
  LevelSpec l;
  l.index = 2;
  l.input_len = 50;
  l.output_len = 20;
  RequestSource a(l, 10, 0, 5), b(l, 10, 0, 5);
  double sum = 0;
  for (int i = 0; i < 2000; ++i) {
    const RequestShape x = a.next(), y = b.next();
    EXPECT_EQ(x.prompt_ids, y.prompt_ids);
    EXPECT_EQ(x.output_len, 20);
    EXPECT_GE(x.input_len, 1);
    EXPECT_EQ(int(x.prompt_ids.size()), x.input_len);
    for (auto id : x.prompt_ids) {
      ASSERT_GE(id, RequestSource::kPromptIdMin);
      ASSERT_LE(id, RequestSource::kPromptIdMax);
    }
    sum += x.input_len;
  }
  EXPECT_NEAR(sum / 2000, 50, 1.0);
}

TEST(RequestBody, CompletionsAndChatShapes) {
  const auto c = nlohmann::json::parse(request_body("tiny", false, true, {16, 17}, 8, true, true));
  EXPECT_EQ(c["model"], "tiny");
  EXPECT_EQ(c["prompt"], nlohmann::json::array({16, 17}));
  EXPECT_EQ(c["max_tokens"], 8);
  EXPECT_EQ(c["stream"], true);
  EXPECT_EQ(c["stream_options"]["include_usage"], true);
  EXPECT_EQ(c["ignore_eos"], true);
  const auto t = nlohmann::json::parse(request_body("m", false, false, {16, 17}, 8, false, false));
  EXPECT_TRUE(t["prompt"].is_string());
  EXPECT_FALSE(t.contains("ignore_eos"));
  EXPECT_FALSE(t.contains("stream_options"));
  const auto h = nlohmann::json::parse(request_body("m", true, true, {16, 17, 18}, 4, false, true));
  EXPECT_EQ(h["messages"][0]["role"], "user");
  EXPECT_EQ(h["messages"][0]["content"], synthetic_text({16, 17, 18}));
  EXPECT_EQ(synthetic_text({16, 17, 18}).find(' ') != std::string::npos, true);
}

TEST(SseSplitter, EventsAcrossReadsCrLfCommentsAndMultiLineData) {
  SseSplitter s;
  std::vector<SseEvent> out;
  const std::string stream = ": comment\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: line1\ndata:line2\n\ndata: [DONE]\n\n";
  // Fed one byte at a time with increasing stamps: an event takes the stamp of its last byte.
  for (std::size_t i = 0; i < stream.size(); ++i) s.feed(&stream[i], 1, std::int64_t(i), out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].data, "{\"a\":1}");
  EXPECT_EQ(out[0].arrival_ns, std::int64_t(stream.find("\r\n\r\n") + 3));
  EXPECT_EQ(out[1].data, "line1\nline2");
  EXPECT_EQ(out[2].data, "[DONE]");
  EXPECT_FALSE(s.has_partial());
  s.feed("data: {\"b\"", 10, 99, out);
  EXPECT_TRUE(s.has_partial());
  EXPECT_EQ(out.size(), 3u);
}

TEST(ParseStream, CompletionsChunksUsageAndDone) {
  const std::vector<SseEvent> ev = {
      {10, R"({"choices":[{"index":0,"text":"a","finish_reason":null,"token_ids":[5]}]})"},
      {20, R"({"choices":[{"index":0,"text":"bc","finish_reason":null,"token_ids":[6,7]}]})"},
      {25, R"({"choices":[{"index":0,"text":"d","finish_reason":"length"}]})"},
      {30, R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})"},
      {31, "[DONE]"}};
  const ParsedStream s = parse_stream(ev, false);
  EXPECT_EQ(s.error, "");
  ASSERT_EQ(s.chunks.size(), 3u);
  EXPECT_EQ(s.chunks[1].tokens, 2);
  EXPECT_EQ(s.chunks[2].tokens, 1);
  EXPECT_EQ(s.chunks[2].arrival_ns, 25);
  EXPECT_EQ(s.prompt_tokens, 3);
  EXPECT_EQ(s.completion_tokens, 4);
  EXPECT_EQ(s.finish_reason, "length");
  EXPECT_TRUE(s.done);
}

TEST(ParseStream, ChatDeltasSkipTheRoleOnlyChunk) {
  const std::vector<SseEvent> ev = {
      {10, R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"},
      {20, R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})"},
      {30, R"({"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]})"},
      {31, "[DONE]"}};
  const ParsedStream s = parse_stream(ev, true);
  EXPECT_EQ(s.error, "");
  ASSERT_EQ(s.chunks.size(), 2u);
  EXPECT_EQ(s.chunks[0].arrival_ns, 20);
}

TEST(ParseStream, MalformedEventsAndErrorObjectsAreErrors) {
  EXPECT_EQ(parse_stream({{1, "{not json"}}, false).error.rfind("malformed SSE: event is not a JSON object", 0), 0u);
  EXPECT_EQ(parse_stream({}, false).error, "malformed SSE: no data events in a 200 response");
  EXPECT_EQ(parse_stream({{1, R"({"error":{"message":"engine failed"}})"}, {2, "[DONE]"}}, false).error,
            "server error in stream: engine failed");
  EXPECT_EQ(parse_stream({{1, R"({"choices":[]})"}, {2, "[DONE]"}}, false).error,
            "stream carried no output tokens");
  EXPECT_EQ(parse_stream({{1, "[DONE]"}, {2, R"({"choices":[]})"}}, false).error,
            "malformed SSE: an event after [DONE]");
}

RequestRecord ok_request(std::int64_t send, std::vector<std::int64_t> chunk_times, int tokens) {
  RequestRecord r;
  r.ok = true;
  r.input_len = 10;
  r.send_ns = send;
  for (auto t : chunk_times) r.chunks.push_back({t, 1});
  r.first_token_ns = chunk_times.front();
  r.end_ns = chunk_times.back();
  r.output_tokens = tokens;
  return r;
}

TEST(LoadMetrics, ExactValuesOfOneLevel) {
  // Request 0: sent at 0, tokens at 100, 110, 130 ms (3 tokens): TTFT 100, E2EL 130,
  //   TPOT (130 - 100) / 2 = 15, ITL 10 and 20.
  // Request 1: sent at 50, tokens at 250, 270 ms: TTFT 200, E2EL 220, TPOT 20, ITL 20.
  // Request 2: failed at 300 ms. Duration: 0 .. 300 ms.
  const std::int64_t ms = 1'000'000;
  RequestRecord a = ok_request(0, {100 * ms, 110 * ms, 130 * ms}, 3);
  RequestRecord b = ok_request(50 * ms, {250 * ms, 270 * ms}, 2);
  b.prompt_tokens = 12;  // the server's usage wins over the prompt sent
  RequestRecord c;
  c.send_ns = 60 * ms;
  c.end_ns = 300 * ms;
  c.error = "HTTP 500: boom";
  EXPECT_EQ(*a.ttft_ns(), 100 * ms);
  EXPECT_EQ(*a.e2el_ns(), 130 * ms);
  EXPECT_DOUBLE_EQ(*a.tpot_ns(), 15.0 * ms);
  EXPECT_FALSE(c.ttft_ns());
  GoodputSlo slo;
  slo.ttft_ms = 150;
  const LevelSummary s = summarize_level({a, b, c}, slo);
  EXPECT_EQ(s.requests, 3);
  EXPECT_EQ(s.ok, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.first_error, "HTTP 500: boom");
  EXPECT_DOUBLE_EQ(s.duration_s, 0.3);
  EXPECT_DOUBLE_EQ(s.request_throughput, 2 / 0.3);
  EXPECT_EQ(s.input_tokens, 22);
  EXPECT_EQ(s.output_tokens, 5);
  EXPECT_DOUBLE_EQ(s.output_tok_s, 5 / 0.3);
  EXPECT_DOUBLE_EQ(s.total_tok_s, 27 / 0.3);
  EXPECT_DOUBLE_EQ(s.ttft_ms->mean, 150);
  EXPECT_DOUBLE_EQ(s.ttft_ms->percentile(50), 150);
  EXPECT_DOUBLE_EQ(s.ttft_ms->percentile(90), 190);  // 100 + 0.9 x 100
  EXPECT_DOUBLE_EQ(s.ttft_ms->stdev, std::sqrt(5000.0));
  EXPECT_DOUBLE_EQ(s.tpot_ms->mean, 17.5);
  EXPECT_EQ(s.itl_ms->n, 3);
  EXPECT_DOUBLE_EQ(s.itl_ms->percentile(50), 20);
  EXPECT_NEAR(s.itl_ms->mean, 50.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(s.e2el_ms->percentile(50), 175);
  EXPECT_DOUBLE_EQ(s.user_tok_s->mean, (3 / 0.13 + 2 / 0.22) / 2);
  EXPECT_EQ(s.good, 1);  // TTFT 200 > 150
  EXPECT_DOUBLE_EQ(*s.goodput_req_s, 1 / 0.3);
  EXPECT_DOUBLE_EQ(*s.good_fraction, 1.0 / 3);
  // One output token: no TPOT, and the TPOT limit does not apply.
  RequestRecord one = ok_request(0, {5 * ms}, 1);
  EXPECT_FALSE(one.tpot_ns());
  GoodputSlo tpot_only;
  tpot_only.tpot_ms = 1;
  EXPECT_TRUE(meets_slo(one, tpot_only));
  EXPECT_FALSE(meets_slo(a, tpot_only));
}

TEST(ServerCommand, PortPlaceholderIsSubstitutedEverywhere) {
  EXPECT_EQ(substitute_port("serve --port {port} --url http://h:{port}/", 8123),
            "serve --port 8123 --url http://h:8123/");
  EXPECT_EQ(substitute_port("no placeholder", 1), "no placeholder");
  const int p = pick_free_port();
  EXPECT_GT(p, 0);
  EXPECT_LT(p, 65536);
}

// --no-stream answers (parse_completion): completions text and chat message read by the stream
// rules, tokens from usage (else token_ids), no chunk to time; what is not an answer is refused.
TEST(LoadUnits, ANonStreamedAnswerGivesUsageTokensAndNoChunks) {
  ParsedStream c = parse_completion(
      R"({"choices":[{"index":0,"text":"hello","finish_reason":"length"}],)"
      R"("usage":{"prompt_tokens":5,"completion_tokens":7}})", false, true);
  EXPECT_EQ(c.error, "");
  EXPECT_TRUE(c.chunks.empty());
  EXPECT_EQ(c.completion_tokens, 7);
  EXPECT_EQ(c.prompt_tokens, 5);
  EXPECT_EQ(c.finish_reason, "length");
  EXPECT_EQ(c.text, "hello");
  ParsedStream chat = parse_completion(
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":"hi there"},)"
      R"("finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}})", true, true);
  EXPECT_EQ(chat.error, "");
  EXPECT_EQ(chat.completion_tokens, 2);
  EXPECT_EQ(chat.text, "hi there");
  EXPECT_EQ(chat.finish_reason, "stop");
  ParsedStream ids = parse_completion(
      R"({"choices":[{"index":0,"text":"ab","token_ids":[5,6,7],"finish_reason":"length"}]})", false);
  EXPECT_EQ(ids.error, "");
  EXPECT_EQ(ids.completion_tokens, 3);
  EXPECT_NE(parse_completion(R"({"choices":[{"index":0,"text":"ab"}]})", false).error.find(
                "no usage.completion_tokens"), std::string::npos);
  EXPECT_NE(parse_completion("not json", false).error.find("not a JSON object"), std::string::npos);
  EXPECT_NE(parse_completion(R"({"error":{"message":"boom"}})", false).error.find("boom"),
            std::string::npos);
  EXPECT_NE(parse_completion(R"({"choices":[]})", false).error, "");
}

}  // namespace
}  // namespace llmbench
