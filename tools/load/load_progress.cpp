// The live progress line of a load level (see load_progress.h).
#include "tools/load/load_progress.h"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

namespace llmbench {

namespace {

// "0:05", "1:02:03".
std::string clock_text(double seconds) {
  const long s = long(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

std::string live_progress_text(const std::string& label, int total, double duration_s,
                               const LiveCounts& c) {
  const double elapsed_s = double(c.elapsed_ns) / 1e9;
  const int ok = c.finished - c.failed;
  std::string s = total > 0 ? fmt::format("{}: {}/{} done", label, c.finished, total)
                            : fmt::format("{}: {} done", label, c.finished);
  s += fmt::format(", {} ok, {} err", ok, c.failed);
  s += elapsed_s > 0 ? fmt::format(" | {:.2f} req/s", c.finished / elapsed_s) : " | -- req/s";
  if (!c.first_event_ns.empty()) {
    std::vector<std::int64_t> v = c.first_event_ns;
    // The lower median: no interpolation for a live figure.
    const auto mid = v.begin() + std::ptrdiff_t((v.size() - 1) / 2);
    std::nth_element(v.begin(), mid, v.end());
    s += fmt::format(" | TTFT p50 {:.1f} ms", double(*mid) / 1e6);
  } else {
    s += " | TTFT p50 --";
  }
  s += elapsed_s > 0 ? fmt::format(" | {:.0f} tok/s", double(c.output_events) / elapsed_s)
                     : " | -- tok/s";
  std::string eta = "--";
  if (total > 0 && c.finished > 0 && elapsed_s > 0) {
    const double left = elapsed_s * double(total - c.finished) / c.finished;
    eta = clock_text(std::max(0.0, left));
  } else if (total <= 0 && duration_s > 0) {
    eta = clock_text(std::max(0.0, duration_s - elapsed_s));
  }
  return s + " | ETA " + eta;
}

LevelProgress::LevelProgress(std::string label, int total, double duration_s, bool quiet,
                             bool terminal, std::FILE* out)
    : label_(std::move(label)), total_(total), duration_s_(duration_s), quiet_(quiet),
      terminal_(terminal), out_(out) {}

LevelProgress::~LevelProgress() {
  if (drawn_) {
    fmt::print(out_, "\r\033[K");
    std::fflush(out_);
  }
}

std::function<void(const LiveCounts&)> LevelProgress::callback() {
  if (quiet_) return nullptr;
  return [this](const LiveCounts& c) { update(c); };
}

void LevelProgress::update(const LiveCounts& c) {
  ++updates_;
  const std::string line = live_progress_text(label_, total_, duration_s_, c);
  if (terminal_) {
    fmt::print(out_, "\r\033[K{}", line);
    drawn_ = true;
  } else {
    fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
}

}  // namespace llmbench
