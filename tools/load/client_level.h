// Inside the load client (load_client.h): the event loop of one level, as a small state machine
// over libcurl's multi handle. Each pass of the loop starts what is due (new sessions at their
// arrival or when a slot frees, later turns of open sessions when their think time has passed),
// collects finished transfers, enforces the first-byte and idle timeouts, reports progress and
// sleeps until a socket is ready or the next start is due. Streams are parsed after the loop,
// except a multi-turn session's turns, whose reply the next turn may need.
// Not a public interface of the library: LoadClient::run is.
#pragma once
#include <curl/curl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

#include "tools/load/client_transfer.h"
#include "tools/load/load_client.h"

namespace llmbench::client_detail {

class LevelRun {
 public:
  LevelRun(CURLM* multi, curl_slist* headers, const ClientOptions& opt, const LevelDrive& d);
  LevelOutcome run();

 private:
  // A later turn of an open session, due at due_ns.
  struct PendingTurn {
    std::int64_t due_ns;
    int session, turn;
    bool operator>(const PendingTurn& o) const { return due_ns > o.due_ns; }
  };

  void start_due(std::int64_t now);
  void start_turn(int session, int turn, std::int64_t scheduled_ns);
  void collect_finished();
  void check_timeouts(Clock::time_point now);
  void retire(Transfer* t);
  void wait_for_work();
  bool finished() const;
  // When the next session or turn is due (INT64_MAX: nothing is waiting on time).
  std::int64_t next_due_ns() const;
  bool can_open_session() const;
  int turns_of(int session) const { return d_.turns ? d_.turns(session) : 1; }
  void finish_outcome();
  void report_progress(Clock::time_point now);

  CURLM* multi_;
  curl_slist* headers_;
  const ClientOptions& opt_;
  const LevelDrive& d_;
  LevelOutcome out_;
  bool rate_mode_, multi_turn_;
  int cap_;                     // sessions open at once
  int session_limit_;           // sessions to start
  std::int64_t duration_ns_, first_byte_ns_, idle_ns_;
  std::vector<std::unique_ptr<Transfer>> done_;  // parsed after the loop
  std::vector<Transfer*> active_;
  std::priority_queue<PendingTurn, std::vector<PendingTurn>, std::greater<>> pending_;
  int sessions_started_ = 0, sessions_open_ = 0;
  int started_ = 0, finished_ = 0, failed_transport_ = 0;
  bool stop_starting_ = false;
  Clock::time_point last_progress_, last_timeout_check_;
  LiveCounts live_;
  // Rate levels with LevelDrive::saturation: the guard, fed every 100 ms and at each first token.
  std::optional<SaturationGuard> guard_;
  std::int64_t next_sample_ns_ = 0;
  void watch_saturation(std::int64_t now);
};

}  // namespace llmbench::client_detail
