// Progress of a sweep on stderr: case i of N, the current case, elapsed time and ETA.
// On a terminal the status line is redrawn in place (twice a second, by a ticker thread) and
// each finished case leaves one line above it; when stderr is not a terminal (CI logs, files)
// only the plain line per finished case is written. Quiet: nothing at all.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace llmbench {

class Progress {
 public:
  // total: the cases this process will run (resumed ones already stored are not counted).
  Progress(int total, bool quiet, bool terminal);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Case `index` (0-based among the `total`) starts.
  void start_case(int index, const std::string& label);
  // The current case finished; `outcome` is its one-line summary ("TTFT 2.45 ms, ...").
  void finish_case(const std::string& outcome);
  // Any other message for stderr (a notice), printed without tearing the status line.
  void note(const std::string& line);

  // "1:05", "12:03:09": how elapsed time and ETA are written.
  static std::string clock_text(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  std::string status_locked() const;  // "[i/N] label | elapsed | ETA"
  void draw_locked();
  void clear_locked();
  void tick();

  const int total_;
  const bool quiet_, terminal_;
  const Clock::time_point start_ = Clock::now();
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  int index_ = -1, done_ = 0;
  double done_seconds_ = 0;  // summed durations of finished cases
  Clock::time_point case_start_;
  std::string label_;
  std::thread ticker_;
};

}  // namespace llmbench
