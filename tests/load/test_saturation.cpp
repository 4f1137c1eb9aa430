// The saturation guard (tools/load/saturation.h): the slope fit against exact lines, the rule on
// seeded synthetic levels (a growing queue fires within its window and confirmations; a level
// at capacity, its ramp-up and a TTFT that rises while the queue does not never fire), and the
// client against a scripted one-thread server offered twice and a quarter of its capacity:
// over capacity is found and, with stop_on_saturation, ends the level early.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <vector>

#include "tests/load/scripted_server.h"
#include "tools/load/load_client.h"
#include "tools/load/load_driver.h"
#include "tools/load/saturation.h"

namespace llmbench {
namespace {

using namespace std::chrono_literals;
constexpr std::int64_t kMs = 1'000'000;

TEST(Saturation, SlopeFitOfAnExactLineAndOfNoise) {
  std::vector<double> t, y;
  for (int i = 0; i < 20; ++i) t.push_back(i * 0.5), y.push_back(3 + 2 * i * 0.5);
  const SlopeFit f = fit_slope(t, y);
  EXPECT_NEAR(f.slope, 2.0, 1e-12);
  EXPECT_GT(f.t_stat, 1e6);
  EXPECT_NEAR(f.mean_y, 3 + 2 * 4.75, 1e-12);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> flat;
  for (int i = 0; i < 20; ++i) flat.push_back(5 + noise(rng));
  EXPECT_LT(std::abs(fit_slope(t, flat).t_stat), 3.0);
  EXPECT_EQ(fit_slope({1, 2}, {1, 2}).t_stat, 0.0);  // two points: no residual degrees of freedom
}

// A simulated level: in flight sampled every 100 ms, one first token every 50 ms; `queue(t)`
// and `ttft(t)` give the means, noise on both. Returns when the guard fired (or -1).
template <class Q, class F>
std::int64_t simulate(std::uint64_t seed, double seconds, Q queue, F ttft, SaturationGuard& g) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 1);
  g.ramp_done(500 * kMs);
  for (std::int64_t t = 0; t <= std::int64_t(seconds * 1000) * kMs; t += 50 * kMs) {
    const double s = double(t) / 1e9;
    if (t % (100 * kMs) == 0)
      g.add_in_flight(t, std::max(0, int(std::lround(queue(s) + 1.5 * noise(rng)))));
    g.add_ttft(t, std::int64_t(std::max(1.0, ttft(s) * (1 + 0.15 * noise(rng))) * 1e6));
    if (g.check(t)) return *g.fired_at_ns();
  }
  return -1;
}

TEST(Saturation, AGrowingQueueFiresWithinItsWindowAndConfirmations) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    SaturationGuard g;  // 10 s window, checks each second, 3 confirmations
    // Arrivals outpace completions by 2 req/s from 5 s on; TTFT grows with the queue.
    auto queue = [](double s) { return s < 5 ? 6.0 : 6 + 2 * (s - 5); };
    auto ttft = [](double s) { return s < 5 ? 100.0 : 100 + 40 * (s - 5); };
    const std::int64_t at = simulate(seed, 60, queue, ttft, g);
    ASSERT_GE(at, 0) << "seed " << seed;
    // At the earliest once 10 s after the ramp (0.5 s) have passed; by 5 + 10 + 3 s at the latest.
    EXPECT_GE(at, 10'500 * kMs) << seed;
    EXPECT_LE(at, 18'500 * kMs) << seed;
    EXPECT_TRUE(g.judged());
    EXPECT_GT(g.evidence().queue_slope_per_s, 1.0);
    EXPECT_GT(g.evidence().ttft_slope_ms_per_s, 20.0);
  }
}

TEST(Saturation, AtCapacityRampUpAndTtftAloneNeverFire) {
  int fired = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    SaturationGuard steady, ramp, ttft_only;
    // At capacity: a steady 6 in flight, TTFT 100 ms, noise on both.
    fired += simulate(seed, 60, [](double) { return 6.0; }, [](double) { return 100.0; }, steady) >= 0;
    // The ramp-up (0 to 6 in the first 2 s, TTFT rising with it) lies before ramp_done + window.
    fired += simulate(seed, 60, [](double s) { return std::min(6.0, 3 * s); },
                      [](double s) { return std::min(100.0, 50 * s + 1); }, ramp) >= 0;
    // TTFT creeps up (longer prompts) while the queue stays flat: not a queue.
    fired += simulate(seed, 60, [](double) { return 6.0; }, [](double s) { return 100 + 5 * s; },
                      ttft_only) >= 0;
    EXPECT_TRUE(steady.judged());
  }
  EXPECT_EQ(fired, 0);
}

TEST(Saturation, ALevelShorterThanTheWindowIsNotJudged) {
  SaturationGuard g;
  EXPECT_EQ(simulate(3, 8, [](double s) { return 2 * s; }, [](double s) { return 100 + 50 * s; }, g), -1);
  EXPECT_FALSE(g.judged());
  EXPECT_FALSE(g.fired());
}

// The client against a server with one thread and 40 ms per request (25 req/s).
struct OneThreadServer {
  test::ScriptedServer server;
  OneThreadServer() : server(script(), /*threads=*/1) { server.close_after_each_request(); }
  static test::Script script() {
    test::Script s;
    s.tokens = 4;
    s.first_delay = 10ms;
    s.gap = 10ms;
    return s;
  }
};

LevelDrive rate_level(double rate, double seconds, bool stop) {
  LevelDrive d;
  const int n = int(rate * seconds);
  d.max_requests = n;
  d.arrival_s = arrival_offsets_s(n, rate, 4.0, 7);
  d.make_body = [](int, RequestRecord& rec) {
    rec.input_len = 4;
    rec.max_tokens = 4;
    return request_body("scripted", false, true, {16, 17, 18, 19}, 4, false, true);
  };
  SaturationParams p;
  p.window_s = 1.0;
  p.check_every_s = 0.2;
  d.saturation = p;
  d.stop_on_saturation = stop;
  return d;
}

ClientOptions options(const std::string& base) {
  ClientOptions o;
  o.url = base + "/v1/completions";
  o.connect_timeout_s = 5;
  o.first_byte_timeout_s = 30;
  o.idle_timeout_s = 30;
  return o;
}

TEST(SaturationClient, TwiceTheCapacityIsOverCapacityAndStopsWhenAsked) {
  OneThreadServer s;
  LoadClient client(options(s.server.url()));
  // 50 req/s for 4 s against 25 req/s: the queue grows by about 25 a second.
  const LevelOutcome watched = client.run(rate_level(50, 4, false));
  ASSERT_TRUE(watched.over_capacity.has_value());
  EXPECT_TRUE(*watched.over_capacity);
  ASSERT_TRUE(watched.saturation_ns.has_value());
  EXPECT_FALSE(watched.stopped_early);
  int ok = 0;
  for (const RequestRecord& r : watched.requests) ok += r.ok;
  EXPECT_EQ(ok, 200);  // without --stop-on-saturation the queue runs to its end

  const auto t0 = std::chrono::steady_clock::now();
  const LevelOutcome stopped = client.run(rate_level(50, 4, true));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(stopped.over_capacity.value_or(false));
  EXPECT_TRUE(stopped.stopped_early);
  // Draining 200 requests takes 8 s at 25 req/s; stopped, the level ends soon after it fired.
  EXPECT_LT(double(stopped.requests.size()), 200.0);
  EXPECT_LT(wall, 6.0);
  int aborted = 0;
  for (const RequestRecord& r : stopped.requests)
    aborted += r.error.find("--stop-on-saturation") != std::string::npos;
  EXPECT_GT(aborted, 0);
}

TEST(SaturationClient, AQuarterOfTheCapacityIsJudgedNotOver) {
  OneThreadServer s;
  LoadClient client(options(s.server.url()));
  const LevelOutcome out = client.run(rate_level(6, 4, true));
  ASSERT_TRUE(out.over_capacity.has_value());
  EXPECT_FALSE(*out.over_capacity);
  EXPECT_FALSE(out.stopped_early);
  for (const RequestRecord& r : out.requests) EXPECT_TRUE(r.ok) << r.error;
}

}  // namespace
}  // namespace llmbench
