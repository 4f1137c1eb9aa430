// Scraping /metrics during a level (see metrics_scrape.h).
#include "tools/load/metrics_scrape.h"

#include <algorithm>

#include "kernels/common/error.h"
#include "tools/load/load_client.h"
#include "tools/load/prometheus_text.h"

namespace llmbench {

void ScrapeLog::add(const std::string& body, std::chrono::steady_clock::time_point at) {
  PromText t = parse_prometheus_text(body);
  rejected_lines += int(t.rejected.size());
  if (first_problem.empty() && !t.rejected.empty()) first_problem = t.rejected.front().reason;
  for (const PromSample& s : t.samples) {
    const std::string key = series_key(s);
    auto found = index_.find(key);
    if (found == index_.end() && max_series && series.size() >= max_series) {
      ++dropped_samples;  // a server that invents series cannot grow the run without bound
      continue;
    }
    auto [it, fresh] = index_.try_emplace(key, int(series.size()));
    if (fresh) {
      series.push_back(key);
      metric.push_back(s.name);
      // A histogram's _bucket/_sum/_count series belong to the family without the suffix.
      std::string family_type;
      for (const char* suffix : {"", "_bucket", "_sum", "_count", "_total", "_created"}) {
        const std::string sfx(suffix);
        if (s.name.size() < sfx.size() || s.name.compare(s.name.size() - sfx.size(), sfx.size(), sfx))
          continue;
        auto f = t.type.find(s.name.substr(0, s.name.size() - sfx.size()));
        if (f != t.type.end()) {
          family_type = f->second;
          break;
        }
      }
      type.push_back(family_type);
    }
    samples.push_back({at, it->second, s.value});
  }
}

std::string metrics_url(const std::string& flag_value, const std::string& base_url) {
  if (flag_value.empty()) return "";
  if (flag_value == "auto") return base_url + "/metrics";
  if (flag_value.rfind("http://", 0) != 0)
    throw BadInput("--server-metrics: expected auto or an http:// URL, got '" + flag_value + "'");
  return flag_value;
}

MetricsScraper::MetricsScraper(std::string url, int interval_ms, std::size_t max_series,
                               double timeout_s)
    : url_(std::move(url)), interval_(interval_ms),
      // A slow /metrics must not hold the level up: by default at most the interval, at least
      // a second (llama-server on 2 busy cores can take longer: --metrics-timeout).
      timeout_s_(timeout_s > 0 ? timeout_s : std::max(1.0, double(interval_ms) / 1000.0)) {
  log_.max_series = max_series;
  thread_ = std::thread([this] { loop(); });
}

MetricsScraper::~MetricsScraper() {
  if (thread_.joinable()) stop();
}

void MetricsScraper::scrape_once() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  const HttpResponse r = http_get(url_, timeout_s_, kMaxScrapeBytes);
  const Clock::time_point t1 = Clock::now();
  std::lock_guard lock(mu_);
  if (r.status != 200) {
    ++log_.failed_scrapes;
    if (r.error.rfind("response larger than", 0) == 0) ++log_.oversize_scrapes;
    if (log_.first_problem.empty())
      log_.first_problem = r.status == 0 ? "GET " + url_ + ": " + r.error
                                         : "GET " + url_ + ": HTTP " + std::to_string(r.status);
    return;
  }
  ++log_.scrapes;
  log_.add(r.body, t0 + (t1 - t0) / 2);
}

void MetricsScraper::loop() {
  auto next = std::chrono::steady_clock::now();
  while (true) {
    scrape_once();
    next += interval_;
    std::unique_lock lock(mu_);
    // A late scrape does not make the next ones come in a burst.
    next = std::max(next, std::chrono::steady_clock::now());
    if (cv_.wait_until(lock, next, [this] { return stop_; })) return;
  }
}

ScrapeLog MetricsScraper::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  scrape_once();  // the state at the level's end
  std::lock_guard lock(mu_);
  return std::move(log_);
}

}  // namespace llmbench
