// `llmbench load --server-metrics [URL|auto]`: a background thread that GETs the server's
// Prometheus /metrics every --metrics-interval-ms while a level runs and keeps every sample of
// every series (parsed by prometheus_text.h, whatever the engine names them). Each scrape is
// stamped with steady_clock at the midpoint of its request; a scrape that fails (no answer,
// HTTP error) is counted, not fatal, and so is each malformed line. The load client's thread
// is not touched: scraping costs it nothing but a core's share.
// Not here: storing the samples (server_metrics_store.h) or reading them (queries/).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace llmbench {

// Everything scraped during one level.
struct ScrapeLog {
  struct Sample {
    std::chrono::steady_clock::time_point at;
    int series = 0;  // index into `series`
    double value = 0;
  };
  std::vector<std::string> series;  // series_key()s, in first-seen order
  std::vector<std::string> metric;  // each series' metric name (no labels)
  std::vector<std::string> type;    // each series' family type from # TYPE ("" when none)
  std::vector<Sample> samples;
  int scrapes = 0;                  // answered with HTTP 200
  int failed_scrapes = 0;           // no answer or not 200
  int rejected_lines = 0;           // malformed lines over every scrape
  int oversize_scrapes = 0;         // answers over kMaxScrapeBytes, dropped whole (among failed)
  std::int64_t dropped_samples = 0;  // samples of series beyond max_series, not kept
  std::size_t max_series = 0;       // new series kept at most (0: none)
  std::string first_problem;        // the first failed scrape's or rejected line's reason

  // Adds one scrape's body at `at`.
  void add(const std::string& body, std::chrono::steady_clock::time_point at);

 private:
  std::map<std::string, int> index_;
};

// "auto" -> BASE/metrics; a URL is checked (http://...); "" -> "" (off).
std::string metrics_url(const std::string& flag_value, const std::string& base_url);

class MetricsScraper {
 public:
  // One scrape's body at most (an endless /metrics was read whole: 321 MB to 1 GB a scrape).
  static constexpr std::size_t kMaxScrapeBytes = std::size_t(8) << 20;
  // Scrapes `url` at once, then every `interval_ms`, until stop(), keeping at most
  // `max_series` series (0: no cap; the run's cap less what earlier levels kept).
  // `timeout_s` bounds each GET (0: max(1 s, the interval)).
  MetricsScraper(std::string url, int interval_ms, std::size_t max_series = 0, double timeout_s = 0);
  ~MetricsScraper();
  MetricsScraper(const MetricsScraper&) = delete;
  MetricsScraper& operator=(const MetricsScraper&) = delete;

  // Takes one last scrape, ends the thread and returns what was scraped.
  ScrapeLog stop();

 private:
  void loop();
  void scrape_once();

  std::string url_;
  std::chrono::milliseconds interval_;
  double timeout_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  ScrapeLog log_;
  std::thread thread_;
};

}  // namespace llmbench
