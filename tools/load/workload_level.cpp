// File workloads in the driver (see workload_level.h).
#include "tools/load/workload_level.h"

#include <fmt/core.h>

#include <algorithm>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"

namespace llmbench {

std::unique_ptr<FileWorkload> open_file_workload(const LoadPlan& plan,
                                                 const std::function<void(const std::string&)>& note) {
  const LoadOptions& o = plan.opt;
  if (o.dataset_name == "random") return nullptr;
  auto w = std::make_unique<FileWorkload>();
  if (!o.tokenizer.empty()) {
    try {
      w->tokenizer = std::make_unique<Tokenizer>(Tokenizer::open(o.tokenizer));
    } catch (const BadInput& e) {
      throw BadInput(std::string("--tokenizer: ") + e.what());
    }
  }
  DatasetOptions d;
  d.name = o.dataset_name;
  d.path = o.dataset_path;
  d.num_requests = o.num_requests;
  d.seed = o.seed;
  d.multi_turn = o.multi_turn;
  d.default_output_len = plan.slo_sweep        ? plan.slo_level.output_len
                         : plan.levels.empty() ? 128
                                               : plan.levels.front().output_len;
  d.hash_block_size = o.hash_block_size;
  d.tokenizer = w->tokenizer.get();
  w->workload = read_dataset(d);
  for (const std::string& n : w->workload.notes) note(n);
  if (o.dataset_name == "mooncake")
    w->lengths = "the trace's input_length and output_length";
  else if (w->tokenizer)
    w->lengths = "counted with " + w->tokenizer->name();
  else
    w->lengths = fmt::format("prompt tokens from the server's usage (no --tokenizer); max_tokens "
                             "{} unless the file gives one", d.default_output_len);
  std::size_t turns = 0;
  for (const WorkloadSession& s : w->workload.sessions) turns += s.turns.size();
  note(fmt::format("{} {}: {} session{}, {} request{}; lengths: {}", o.dataset_name,
                   o.dataset_path, w->workload.sessions.size(),
                   w->workload.sessions.size() == 1 ? "" : "s", turns, turns == 1 ? "" : "s",
                   w->lengths));
  if (w->workload.multi_turn && !o.use_server_responses)
    note("multi-turn history: the dataset's answers (the server's where the file has none)");
  return w;
}

void drive_file_level(FileWorkload& w, const LevelSpec& level, const LoadOptions& o,
                      LevelDrive& d, int warmup) {
  w.bodies->attach(d);
  d.arrival_s.clear();
  if (warmup > 0) {
    d.max_requests = std::min(warmup, d.max_requests);
    d.concurrency = 1;
    return;
  }
  if (level.mode == LoadMode::kRate)
    d.arrival_s = arrival_offsets_s(d.max_requests, level.request_rate, level.burstiness,
                                    o.seed + std::uint64_t(level.index));
  else if (level.mode == LoadMode::kTrace)
    d.arrival_s = w.bodies->arrival_s(level.time_scale);
  // Send times are held in int64 ns: beyond 1e7 s (115 days) they are no benchmark anyway.
  if (!d.arrival_s.empty() && !(d.arrival_s.back() <= 1e7))
    throw BadInput(fmt::format("--time-scale: the trace's last request would be sent {:g} s "
                               "after the first (at most 1e7 s)", d.arrival_s.back()));
}

std::optional<ScheduleLag> schedule_lag(const std::vector<RequestRecord>& requests) {
  std::vector<double> lag_ms;
  ScheduleLag l;
  for (const RequestRecord& r : requests) {
    if (r.scheduled_ns < 0) continue;
    const double ms = double(r.send_ns - r.scheduled_ns) / 1e6;
    lag_ms.push_back(ms);
    l.late_1ms += ms > 1 ? 1 : 0;
    l.late_10ms += ms > 10 ? 1 : 0;
  }
  if (lag_ms.empty()) return std::nullopt;
  l.n = int(lag_ms.size());
  l.p50_ms = percentile(lag_ms, 50);
  l.p99_ms = percentile(lag_ms, 99);
  l.max_ms = *std::max_element(lag_ms.begin(), lag_ms.end());
  return l;
}

std::string schedule_lag_warning(const ScheduleLag& l, int max_in_flight) {
  if (l.p99_ms <= 1) return "";
  if (max_in_flight > 0)
    return fmt::format("note: requests waited for a free slot under --max-concurrency {}: send "
                       "delay p50 {:.2f} ms, p99 {:.2f} ms, max {:.2f} ms ({} of {} requests over "
                       "1 ms late, {} over 10 ms); arrivals came faster than {} requests in flight "
                       "could take, so the offered rate was not the rate sent",
                       max_in_flight, l.p50_ms, l.p99_ms, l.max_ms, l.late_1ms, l.n, l.late_10ms,
                       max_in_flight);
  return fmt::format("warning: the client fell behind its schedule: send lag p50 {:.2f} ms, p99 "
                     "{:.2f} ms, max {:.2f} ms ({} of {} requests over 1 ms late, {} over 10 ms)",
                     l.p50_ms, l.p99_ms, l.max_ms, l.late_1ms, l.n, l.late_10ms);
}

}  // namespace llmbench
