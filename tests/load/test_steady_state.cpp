// The steady-state window of a load level (tools/load/steady_state.h), with exact values on
// hand-built request records: the longest span at the concurrency, the rate rule, what counts
// as inside, the short-window flag.
#include <gtest/gtest.h>

#include "tools/load/load_metrics.h"
#include "tools/load/steady_state.h"

namespace llmbench {
namespace {

constexpr std::int64_t kS = 1'000'000'000;  // ns per second

// An ok request sent at `send_s` and ended at `end_s`, with `tokens` chunks evenly spaced from
// its first token at send + ttft to its end.
RequestRecord request(double send_s, double end_s, int tokens = 3, double ttft_s = 0.1) {
  RequestRecord r;
  r.ok = true;
  r.send_ns = std::int64_t(send_s * kS);
  r.first_byte_ns = r.first_token_ns = std::int64_t((send_s + ttft_s) * kS);
  r.end_ns = std::int64_t(end_s * kS);
  r.output_tokens = tokens;
  for (int i = 0; i < tokens; ++i) {
    const double t = send_s + ttft_s + (end_s - send_s - ttft_s) * i / std::max(1, tokens - 1);
    r.chunks.push_back({std::int64_t(t * kS), 1});
  }
  return r;
}

LevelSpec concurrency(int c) {
  LevelSpec s;
  s.mode = LoadMode::kConcurrency;
  s.concurrency = c;
  return s;
}

TEST(SteadyState, ConcurrencyWindowIsTheLongestSpanAtLoad) {
  // Concurrency 2: one request alone from 0 to 1 (ramp-up), two in flight from 1 to 21, then the
  // last one alone until 25 (drain). Need ceil(0.9 * 2) = 2 in flight.
  const std::vector<RequestRecord> rs = {request(0, 11), request(1, 21), request(11, 25)};
  const auto w = steady_window(rs, concurrency(2));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->start_ns, 1 * kS);
  EXPECT_EQ(w->end_ns, 21 * kS);
  EXPECT_DOUBLE_EQ(w->length_s, 20.0);
  EXPECT_DOUBLE_EQ(w->level_s, 25.0);
  EXPECT_FALSE(w->short_window);  // 20 s >= max(10 s, 2.5 s)
  // Sent inside [1, 21]: the second and third; finished inside too: only the second.
  EXPECT_EQ(w->requests, 2);
  ASSERT_TRUE(w->ttft_ms);
  EXPECT_EQ(w->ttft_ms->n, 2);
  EXPECT_DOUBLE_EQ(w->ttft_ms->percentile(50), 100.0);
  ASSERT_TRUE(w->e2el_ms);
  EXPECT_EQ(w->e2el_ms->n, 1);
  EXPECT_DOUBLE_EQ(w->e2el_ms->percentile(50), 20000.0);
  ASSERT_TRUE(w->tpot_ms);
  EXPECT_NEAR(w->tpot_ms->percentile(50), (20.0 - 0.1) / 2 * 1000, 1e-6);
  // Chunks in [1, 21]: request 0's at 5.55 and 11 (the one at 0.1 is before), request 1's three,
  // request 2's first at 11.1 and second at 18.05: 7 tokens over 20 s.
  EXPECT_DOUBLE_EQ(w->output_tok_s, 7.0 / 20.0);
  // Gaps with both chunks inside: 5.55 -> 11 (5.45 s), request 1's two gaps, 11.1 -> 18.05.
  ASSERT_TRUE(w->itl_ms);
  EXPECT_EQ(w->itl_ms->n, 4);
}

TEST(SteadyState, NeverAtLoadMeansNoWindowAndShortOnesAreFlagged) {
  // Concurrency 4 asked, at most 2 in flight: ceil(3.6) = 4 never reached.
  const std::vector<RequestRecord> two = {request(0, 5), request(1, 6)};
  EXPECT_FALSE(steady_window(two, concurrency(4)));
  // Concurrency 2 reached for 4 s of a 6 s level: shorter than 10 s, flagged.
  const auto w = steady_window(two, concurrency(2));
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->length_s, 4.0);
  EXPECT_TRUE(w->short_window);
  // A failed request counts for load, not for latencies; no ok request: no window.
  std::vector<RequestRecord> failed = two;
  for (auto& r : failed) r.ok = false;
  EXPECT_FALSE(steady_window(failed, concurrency(2)));
  // An end and a send at the same instant are not two requests in flight at once.
  const std::vector<RequestRecord> relay = {request(0, 5), request(5, 10)};
  EXPECT_FALSE(steady_window(relay, concurrency(2)));
}

TEST(SteadyState, ADipLongerThanTheTurnaroundEndsTheWindow) {
  // Two in flight over [1, 5], none for 200 ms, two again over [5.2, 9]: the longer span wins.
  const std::vector<RequestRecord> gap = {request(0, 5), request(1, 5), request(5.2, 9),
                                          request(5.2, 9.5)};
  auto w = steady_window(gap, concurrency(2));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->start_ns, 1 * kS);
  EXPECT_EQ(w->end_ns, 5 * kS);
  // The same with a 10 ms turnaround: one window over [1, 9].
  const std::vector<RequestRecord> relay = {request(0, 5), request(1, 5), request(5.01, 9),
                                            request(5.01, 9.5)};
  w = steady_window(relay, concurrency(2));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->start_ns, 1 * kS);
  EXPECT_EQ(w->end_ns, 9 * kS);
}

TEST(SteadyState, RateWindowRunsFromTheFirstEndToTheLastSend) {
  LevelSpec rate;
  rate.mode = LoadMode::kRate;
  rate.request_rate = 1;
  std::vector<RequestRecord> rs;
  for (int i = 0; i < 30; ++i) rs.push_back(request(i, i + 4));  // first end 4, last send 29
  const auto w = steady_window(rs, rate);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->start_ns, 4 * kS);
  EXPECT_EQ(w->end_ns, 29 * kS);
  EXPECT_DOUBLE_EQ(w->length_s, 25.0);
  EXPECT_DOUBLE_EQ(w->level_s, 33.0);
  EXPECT_FALSE(w->short_window);
  EXPECT_EQ(w->requests, 26);  // sent at 4 ... 29
  EXPECT_EQ(w->e2el_ms->n, 22);  // sent at 4 ... 25, ended by 29
  // Everything sent before the first end: no steady part.
  const std::vector<RequestRecord> burst = {request(0, 5), request(0.5, 6)};
  EXPECT_FALSE(steady_window(burst, rate));
}

// Time to second token (issue 43): send to the chunk that brings the output to 2 tokens.
TEST(TimeToSecondToken, CountsTokensNotChunks) {
  RequestRecord r = request(1, 2, 3);  // chunks at 1.1, 1.55, 2.0, one token each
  EXPECT_EQ(*ttst_ns(r), std::int64_t(0.55 * kS));
  r.chunks[0].tokens = 2;  // a first chunk of two tokens: the second token came with the first
  EXPECT_EQ(*ttst_ns(r), std::int64_t(0.1 * kS));
  const RequestRecord one = request(1, 2, 1);
  EXPECT_FALSE(ttst_ns(one));
  RequestRecord failed = request(1, 2, 3);
  failed.ok = false;
  EXPECT_FALSE(ttst_ns(failed));
  // The level's distribution: over ok requests with 2 tokens or more.
  const LevelSummary s = summarize_level({request(0, 1, 3), request(0, 2, 3), one}, GoodputSlo{});
  ASSERT_TRUE(s.ttst_ms);
  EXPECT_EQ(s.ttst_ms->n, 2);
  EXPECT_NEAR(s.ttst_ms->percentile(50), (0.55 + 1.05) / 2 * 1000, 1e-6);
}

}  // namespace
}  // namespace llmbench
