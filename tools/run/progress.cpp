// Sweep progress on stderr (see progress.h).
#include "tools/run/progress.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>

namespace llmbench {

Progress::Progress(int total, bool quiet, bool terminal)
    : total_(total), quiet_(quiet), terminal_(terminal) {
  if (!quiet_ && terminal_) ticker_ = std::thread([this] { tick(); });
}

Progress::~Progress() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    if (!quiet_ && terminal_) clear_locked();
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

std::string Progress::clock_text(double seconds) {
  const long s = long(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string Progress::status_locked() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  std::string eta = "--";
  if (done_ > 0) {
    // The mean time of a finished case for each case after the current one, plus what the
    // current one has left of that mean. A current case already longer than the mean has an
    // unknown rest: the ETA then reads "at least" ("1:20+"), never a frozen 0:00.
    const double per_case = done_seconds_ / done_;
    const bool running = index_ >= done_;
    const double current =
        running ? std::chrono::duration<double>(Clock::now() - case_start_).count() : 0;
    const int after_current = total_ - done_ - (running ? 1 : 0);
    const double rest = per_case * std::max(after_current, 0);
    if (running && current > per_case)
      eta = clock_text(rest) + "+";
    else
      eta = clock_text(rest + (running ? per_case - current : 0));
  }
  return fmt::format("[{}/{}] {} | elapsed {} | ETA {}", index_ + 1, total_, label_,
                     clock_text(elapsed), eta);
}

void Progress::draw_locked() {
  if (index_ < 0 || index_ >= total_) return;
  fmt::print(stderr, "\r\033[K{}", status_locked());
  std::fflush(stderr);
}

void Progress::clear_locked() {
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
}

void Progress::tick() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(500));
    if (!stop_) draw_locked();
  }
}

void Progress::start_case(int index, const std::string& label) {
  if (quiet_) return;
  std::lock_guard lock(mu_);
  index_ = index;
  label_ = label;
  case_start_ = Clock::now();
  if (terminal_) draw_locked();
}

void Progress::finish_case(const std::string& outcome) {
  if (quiet_) return;
  std::lock_guard lock(mu_);
  ++done_;
  done_seconds_ += std::chrono::duration<double>(Clock::now() - case_start_).count();
  const std::string line = status_locked();
  const std::string plain = fmt::format("[{}/{}] {}: {} (elapsed {}{})", index_ + 1, total_,
                                        label_, outcome,
                                        clock_text(std::chrono::duration<double>(
                                                       Clock::now() - start_).count()),
                                        done_ < total_ ? ", ETA " + line.substr(line.rfind("ETA ") + 4)
                                                       : "");
  if (terminal_) clear_locked();
  fmt::print(stderr, "{}\n", plain);
  std::fflush(stderr);
}

void Progress::note(const std::string& line) {
  if (quiet_) return;
  std::lock_guard lock(mu_);
  if (terminal_) clear_locked();
  fmt::print(stderr, "{}\n", line);
  if (terminal_) draw_locked();
  std::fflush(stderr);
}

}  // namespace llmbench
