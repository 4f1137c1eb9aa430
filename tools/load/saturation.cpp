// The saturation guard (see saturation.h).
#include "tools/load/saturation.h"

#include <algorithm>
#include <cmath>

namespace llmbench {

SlopeFit fit_slope(const std::vector<double>& t, const std::vector<double>& y) {
  SlopeFit f;
  f.n = int(std::min(t.size(), y.size()));
  if (f.n == 0) return f;
  double mt = 0, my = 0;
  for (int i = 0; i < f.n; ++i) mt += t[std::size_t(i)], my += y[std::size_t(i)];
  mt /= f.n;
  my /= f.n;
  f.mean_y = my;
  double stt = 0, sty = 0;
  for (int i = 0; i < f.n; ++i) {
    const double dt = t[std::size_t(i)] - mt;
    stt += dt * dt;
    sty += dt * (y[std::size_t(i)] - my);
  }
  if (f.n < 3 || stt <= 0) return f;
  f.slope = sty / stt;
  double sse = 0;
  for (int i = 0; i < f.n; ++i) {
    const double r = y[std::size_t(i)] - my - f.slope * (t[std::size_t(i)] - mt);
    sse += r * r;
  }
  const double se = std::sqrt(sse / (f.n - 2) / stt);
  // A perfect line (no residual) is as significant as a slope can be.
  f.t_stat = se > 0 ? f.slope / se : (f.slope > 0 ? 1e9 : f.slope < 0 ? -1e9 : 0);
  return f;
}

SaturationGuard::SaturationGuard(SaturationParams p) : p_(p) {}

void SaturationGuard::ramp_done(std::int64_t t_ns) {
  if (!ramp_end_) ramp_end_ = t_ns;
}

void SaturationGuard::add_in_flight(std::int64_t t_ns, int in_flight) {
  if (ramp_end_ && t_ns >= *ramp_end_) queue_.push_back({t_ns, double(in_flight)});
}

void SaturationGuard::add_ttft(std::int64_t first_token_ns, std::int64_t ttft_ns) {
  if (ramp_end_ && first_token_ns >= *ramp_end_) ttft_.push_back({first_token_ns, double(ttft_ns)});
}

bool SaturationGuard::check(std::int64_t now_ns) {
  if (fired_at_) return true;
  if (!ramp_end_) return false;
  const auto window_ns = std::int64_t(p_.window_s * 1e9);
  if (now_ns - *ramp_end_ < window_ns) return false;  // no whole window after the ramp yet
  if (next_check_ && now_ns < *next_check_) return false;
  next_check_ = now_ns + std::int64_t(p_.check_every_s * 1e9);
  const std::int64_t from = now_ns - window_ns;
  while (!queue_.empty() && queue_.front().t_ns < from) queue_.pop_front();
  while (!ttft_.empty() && ttft_.front().t_ns < from) ttft_.pop_front();
  ++checks_;
  streak_ = positive(now_ns) ? streak_ + 1 : 0;
  if (streak_ >= p_.confirmations) fired_at_ = now_ns;
  return fired_at_.has_value();
}

bool SaturationGuard::positive(std::int64_t now_ns) {
  if (int(queue_.size()) < p_.min_points || int(ttft_.size()) < p_.min_points) return false;
  auto fit = [now_ns](const std::deque<Point>& pts) {
    std::vector<double> t, y;
    t.reserve(pts.size());
    y.reserve(pts.size());
    for (const Point& q : pts) {
      t.push_back(double(q.t_ns - now_ns) / 1e9);
      y.push_back(q.y);
    }
    return fit_slope(t, y);
  };
  const SlopeFit q = fit(queue_), f = fit(ttft_);
  std::vector<double> ttfts;
  for (const Point& q2 : ttft_) ttfts.push_back(q2.y);
  std::nth_element(ttfts.begin(), ttfts.begin() + std::ptrdiff_t(ttfts.size() / 2), ttfts.end());
  const double ttft_median = ttfts[ttfts.size() / 2];
  const bool queue_rises = q.t_stat > p_.min_t &&
                           q.slope * p_.window_s >= std::max(p_.min_queue_rise, p_.min_rise * q.mean_y);
  const bool ttft_rises = f.t_stat > p_.min_t && f.slope * p_.window_s >= p_.min_rise * ttft_median;
  if (queue_rises && ttft_rises)
    evidence_ = {q.slope, f.slope / 1e6, q.mean_y, ttft_median / 1e6};
  return queue_rises && ttft_rises;
}

}  // namespace llmbench
