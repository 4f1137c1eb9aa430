// The live progress line of one `llmbench load` level on stderr: done/total, ok/errors, the
// achieved request rate, TTFT p50 so far, output tok/s and an ETA. On a terminal it is redrawn
// in place at most every 0.5 s; when stderr is not a terminal (CI logs, files) a plain line is
// written at most every 5 s; --quiet writes nothing. The figures are the live ones of
// LiveCounts (load_client.h); the level's summary line after it uses the parsed streams.
// Not here: the summary line itself (load_output.h) or the run's notices.
#pragma once
#include <cstdio>
#include <string>

#include "tools/load/load_client.h"

namespace llmbench {

// "[2/5] c4 in128 out128: 37/100 done, 37 ok, 0 err | 12.4 req/s | TTFT p50 41.2 ms |
//  1530 tok/s | ETA 0:05". `total` 0: unknown (a --duration level); ETA then from the time left.
std::string live_progress_text(const std::string& label, int total, double duration_s,
                               const LiveCounts& c);

class LevelProgress {
 public:
  // quiet: print nothing; terminal: redraw in place (else plain lines, at most every 5 s).
  LevelProgress(std::string label, int total, double duration_s, bool quiet, bool terminal,
                std::FILE* out = stderr);
  ~LevelProgress();  // clears the redrawn line
  LevelProgress(const LevelProgress&) = delete;
  LevelProgress& operator=(const LevelProgress&) = delete;

  // For LevelDrive::progress and ::progress_interval_s: nullptr / unused when quiet.
  std::function<void(const LiveCounts&)> callback();
  double interval_s() const { return terminal_ ? 0.5 : 5.0; }
  int updates() const { return updates_; }

 private:
  void update(const LiveCounts& c);

  std::string label_;
  int total_;
  double duration_s_;
  bool quiet_, terminal_;
  std::FILE* out_;
  int updates_ = 0;
  bool drawn_ = false;
};

}  // namespace llmbench
