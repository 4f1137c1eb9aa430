// A file workload (--dataset-name sharegpt|jsonl|mooncake) inside `llmbench load`'s driver:
// opening --tokenizer and the dataset once, then, per level, pointing the client's LevelDrive at
// its sessions (bodies, turns, think times, and the arrival times of rate and trace levels), and
// after a level the schedule lag of requests that had a due time (sent minus due).
// Not here: the dataset formats (dataset.h), the bodies (session_bodies.h), the loop.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/load/dataset.h"
#include "tools/load/load_client.h"
#include "tools/load/load_plan.h"
#include "tools/load/session_bodies.h"
#include "tools/text/tokenizer.h"

namespace llmbench {

struct FileWorkload {
  std::unique_ptr<Tokenizer> tokenizer;
  Workload workload;
  std::unique_ptr<SessionBodies> bodies;
  // "tokenizer NAME" or "server usage (no --tokenizer); max_tokens --output-len N".
  std::string lengths;
};

// nullptr for the random workload. `note` prints one line on stderr (the readers' notes, the
// lengths' source). BadInput for a bad --tokenizer or --dataset-path. The caller sets `bodies`
// once the probe has said how prompts may be sent.
std::unique_ptr<FileWorkload> open_file_workload(const LoadPlan& plan,
                                                 const std::function<void(const std::string&)>& note);

// Points `d` at the workload for `level`: every session, in order; rate levels draw arrivals
// (seeded per level as the random workload's), trace levels take the trace's timestamps.
// `warmup` > 0: the first `warmup` sessions one after another instead (unmeasured).
void drive_file_level(FileWorkload& w, const LevelSpec& level, const LoadOptions& o,
                      LevelDrive& d, int warmup = 0);

// Schedule lag (send_ns - scheduled_ns) of the requests that were due at a set time.
struct ScheduleLag {
  int n = 0, late_1ms = 0, late_10ms = 0;  // requests, and those sent over 1 / 10 ms late
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};
std::optional<ScheduleLag> schedule_lag(const std::vector<RequestRecord>& requests);
// A warning line when requests were sent late (p99 over 1 ms), else "". With `max_in_flight`
// (--max-concurrency) a late start is that cap holding it until a request ended, as asked, so the
// line says so instead of blaming the client.
std::string schedule_lag_warning(const ScheduleLag& lag, int max_in_flight = 0);

}  // namespace llmbench
