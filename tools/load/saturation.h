// The saturation guard of a rate level (docs/serving.md, "Saturation"): is the server over
// capacity, serving a growing queue instead of the offered load? GuideLLM's over-saturation
// detection is the anchor: when both the number of requests in flight and TTFT keep rising over
// a sliding window, arrivals outpace completions and every later figure of the level measures
// the queue, not the server.
//
// The rule, checked once a second (check_every_s) after the ramp-up (the first completion):
//   over the last `window_s` seconds, fit a least-squares line to the requests in flight
//   (sampled every 100 ms by the client) against time, and one to the TTFT of each first token
//   against the time it arrived. A check is positive when both slopes are significant (t
//   statistic above min_t: one-sided p below about 0.01 at 8 points) and both rises over the
//   window are material: in flight by at least max(min_queue_rise, min_rise x its mean), TTFT by
//   at least min_rise x its median. The guard fires at the `confirmations`-th positive check in
//   a row, and stays fired.
// Pure: the client feeds it observations and the time; no clock, no I/O.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace llmbench {

struct SaturationParams {
  double window_s = 10;       // --saturation-window
  double check_every_s = 1;
  double min_t = 3;           // slope t statistic
  double min_rise = 0.2;      // relative rise over the window (in flight and TTFT)
  double min_queue_rise = 2;  // requests in flight, absolute
  int min_points = 8;         // TTFT points (and in-flight samples) a window needs
  int confirmations = 3;
};

// A least-squares line y = a + b t with the t statistic of b (0 when undefined).
struct SlopeFit {
  double slope = 0, t_stat = 0, mean_y = 0;
  int n = 0;
};
SlopeFit fit_slope(const std::vector<double>& t, const std::vector<double>& y);

class SaturationGuard {
 public:
  explicit SaturationGuard(SaturationParams p = {});

  // Observations, ns since the level's origin. Before ramp_done() they are ignored.
  void ramp_done(std::int64_t t_ns);
  void add_in_flight(std::int64_t t_ns, int in_flight);
  void add_ttft(std::int64_t first_token_ns, std::int64_t ttft_ns);

  // Runs the check when one is due at `now_ns`; true once the guard has fired.
  bool check(std::int64_t now_ns);

  bool fired() const { return fired_at_.has_value(); }
  // When it fired (ns since the origin).
  std::optional<std::int64_t> fired_at_ns() const { return fired_at_; }
  // True once a whole window was checked (a level shorter than the window is not judged).
  bool judged() const { return checks_ > 0; }
  // The last positive check's figures, for the warning line.
  struct Evidence {
    double queue_slope_per_s = 0, ttft_slope_ms_per_s = 0, queue_mean = 0, ttft_median_ms = 0;
  };
  const Evidence& evidence() const { return evidence_; }
  const SaturationParams& params() const { return p_; }

 private:
  struct Point {
    std::int64_t t_ns;
    double y;
  };
  bool positive(std::int64_t now_ns);

  SaturationParams p_;
  std::optional<std::int64_t> ramp_end_, fired_at_, next_check_;
  std::deque<Point> queue_, ttft_;
  int streak_ = 0, checks_ = 0;
  Evidence evidence_;
};

}  // namespace llmbench
