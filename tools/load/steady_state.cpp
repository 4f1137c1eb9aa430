// The steady-state window of a load level (see steady_state.h).
#include "tools/load/steady_state.h"

#include "tools/load/load_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace llmbench {

namespace {

using Span = std::pair<std::int64_t, std::int64_t>;

// The longest span in which at least `need` requests are in flight (a request is in flight from
// its send to its end; at equal times ends come first, so a request ending as another starts is
// not counted twice). A dip below `need` shorter than kSteadyDipNs does not end a span: a
// closed-loop client sends the next request a moment after one ends, so at every completion the
// count drops by one for that moment.
std::optional<Span> longest_span_at_or_above(const std::vector<RequestRecord>& requests,
                                             int need) {
  std::vector<std::pair<std::int64_t, int>> events;  // (time, +1 send / -1 end)
  for (const RequestRecord& r : requests) {
    if (r.send_ns < 0 || r.end_ns < r.send_ns) continue;
    events.push_back({r.send_ns, +1});
    events.push_back({r.end_ns, -1});
  }
  std::sort(events.begin(), events.end());  // -1 sorts before +1 at the same time
  std::optional<Span> best;
  auto keep = [&](std::int64_t from, std::int64_t to) {
    if (!best || to - from > best->second - best->first) best = Span{from, to};
  };
  int in_flight = 0;
  std::int64_t since = 0, dipped = -1;  // dipped: when the count fell below need (-1: it has not)
  bool open = false;
  for (const auto& [t, d] : events) {
    in_flight += d;
    if (in_flight >= need) {
      if (!open) since = t, open = true;
      else if (dipped >= 0 && t - dipped > kSteadyDipNs) keep(since, dipped), since = t;
      dipped = -1;
    } else if (open && dipped < 0) {
      dipped = t;
    }
  }
  if (open && dipped >= 0) keep(since, dipped);
  return best;
}

}  // namespace

std::optional<SteadyWindow> steady_window(const std::vector<RequestRecord>& requests,
                                          const LevelSpec& spec, double fraction) {
  std::int64_t first_send = std::numeric_limits<std::int64_t>::max(), last_end = 0;
  std::int64_t first_end = std::numeric_limits<std::int64_t>::max(), last_send = 0;
  bool any_ok = false;
  for (const RequestRecord& r : requests) {
    if (r.send_ns < 0 || r.end_ns < 0) continue;
    first_send = std::min(first_send, r.send_ns);
    last_send = std::max(last_send, r.send_ns);
    first_end = std::min(first_end, r.end_ns);
    last_end = std::max(last_end, r.end_ns);
    any_ok = any_ok || r.ok;
  }
  if (!any_ok) return std::nullopt;
  Span span;
  if (spec.mode == LoadMode::kConcurrency) {
    const int need = std::max(1, int(std::ceil(fraction * spec.concurrency - 1e-9)));
    const auto s = longest_span_at_or_above(requests, need);
    if (!s || s->second <= s->first) return std::nullopt;
    span = *s;
  } else {
    if (last_send <= first_end) return std::nullopt;  // every request was sent before any ended
    span = {first_end, last_send};
  }
  SteadyWindow w;
  w.start_ns = span.first;
  w.end_ns = span.second;
  w.length_s = double(span.second - span.first) / 1e9;
  w.level_s = double(last_end - first_send) / 1e9;
  auto in = [&](std::int64_t t) { return t >= span.first && t <= span.second; };
  std::vector<double> ttft, tpot, itl, e2el;
  long long tokens = 0;
  for (const RequestRecord& r : requests) {
    for (std::size_t i = 0; i < r.chunks.size(); ++i) {
      if (in(r.chunks[i].arrival_ns)) tokens += r.chunks[i].tokens;
      if (i > 0 && r.ok && in(r.chunks[i - 1].arrival_ns) && in(r.chunks[i].arrival_ns))
        itl.push_back(double(r.chunks[i].arrival_ns - r.chunks[i - 1].arrival_ns) / 1e6);
    }
    if (!r.ok || !in(r.send_ns)) continue;
    ++w.requests;
    if (auto t = r.ttft_ns()) ttft.push_back(double(*t) / 1e6);
    if (!in(r.end_ns)) continue;
    if (auto t = r.tpot_ns()) tpot.push_back(*t / 1e6);
    if (auto t = r.e2el_ns()) e2el.push_back(double(*t) / 1e6);
  }
  w.ttft_ms = distribution(ttft);
  w.tpot_ms = distribution(tpot);
  w.itl_ms = distribution(itl);
  w.e2el_ms = distribution(e2el);
  if (w.length_s > 0) w.output_tok_s = double(tokens) / w.length_s;
  w.short_window = w.length_s < std::max(10.0, 0.1 * w.level_s);
  return w;
}

}  // namespace llmbench
