// The engine thread of `llmbench serve`: owns the Scheduler, takes requests from HTTP threads
// (submit / cancel), runs engine steps while there is work, and hands each request's tokens to
// its RequestStream. HTTP threads never touch the Scheduler; they wait on their stream.
// It also keeps the counters /metrics reports, a bounded in-memory log of steps and finished
// requests, and hands each step and finished request to an EngineLog as it happens (the
// database of `serve --db`, serve_store.h).
// Not here: HTTP or JSON (server.h).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/bench/energy.h"
#include "engine/serving/scheduler.h"
#include "tools/serve/stop_strings.h"
#include "tools/serve/serve_trace.h"

namespace llmbench {

// One event of a request: a token, and/or its end.
struct StreamEvent {
  std::optional<std::int32_t> token;
  FinishReason finish = FinishReason::kNone;
  int prompt_tokens = 0;
  int cached_tokens = 0;  // of the prompt, from the prefix cache
  int completion_tokens = 0;
  std::string error;  // set when the engine failed (finish is then kAbort)
  std::optional<SampledLogprobs> logprobs;  // the request asked for log-probabilities
  std::optional<std::int32_t> stop_token;   // finished by one of its stop_token_ids
};

// A request's events, from the engine thread to the HTTP thread serving it.
class RequestStream {
 public:
  void push(StreamEvent e);
  // Moves the events that arrived into `out`, waiting up to `timeout` for at least one.
  void wait(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<StreamEvent> events_;
};

// A finished request, for the database (times in ns since the engine's origin).
struct ServedRequest {
  RequestId id = 0;
  int prompt_tokens = 0, completion_tokens = 0;
  FinishReason finish = FinishReason::kNone;
  RequestTimes times;
  int cached_tokens = 0;  // prompt tokens whose k/v came from the prefix cache
  std::string x_request_id;  // the X-Request-Id it was served under ("" none)
};

// Receives each engine step and each finished request as it happens, on the engine thread
// with the engine's lock held: an implementation queues and returns, it never blocks.
class EngineLog {
 public:
  virtual ~EngineLog() = default;
  virtual void on_step(const StepStats& step) = 0;
  virtual void on_request(const ServedRequest& request) = 0;
  // serve --trace: op records of finished steps (ServeTrace::collect), after those steps.
  virtual void on_trace(std::vector<OpRecord>&& /*records*/) {}
};

// What /metrics reports.
struct EngineCounters {
  int running = 0, waiting = 0;          // waiting includes requests not yet seen by the engine
  int kv_blocks_used = 0, kv_blocks_total = 0;
  std::int64_t kv_pool_bytes = 0;
  std::int64_t prompt_tokens_total = 0;      // prompt tokens run (prefill rows)
  std::int64_t generation_tokens_total = 0;  // tokens generated
  std::int64_t finished_length = 0, finished_stop = 0, finished_abort = 0;
  std::int64_t prefix_query_tokens_total = 0;  // prompt tokens looked up in the prefix cache
  std::int64_t prefix_hit_tokens_total = 0;    // of which found cached
  int kv_blocks_cached = 0;                    // blocks holding a cached prefix
  std::int64_t steps_total = 0;
  std::int64_t step_ns_total = 0, forward_ns_total = 0;  // host overhead = step - forward
};

class EngineLoop {
 public:
  // Starts the engine thread. max_waiting bounds requests queued and not yet running.
  // omp_threads > 0: the engine thread's OpenMP thread count (a new thread does not inherit
  // the main thread's omp_set_num_threads). trace steps|ops: the engine's steps (and their
  // ops) are recorded (serve_trace.h) and handed to the log.
  // energy (optional, outliving the loop): the board's counter, read around spans of engine
  // steps of at least kEnergySpan (or up to the step that leaves the engine idle), so
  // energy() gives J per output token (docs/metrics.md, "Energy per phase").
  EngineLoop(const Model& model, const SchedulerOptions& options, int max_waiting,
             std::chrono::steady_clock::time_point origin, int omp_threads = 0,
             TraceLevel trace = TraceLevel::kOff, const EnergyMeter* energy = nullptr);
  ~EngineLoop();  // aborts everything and joins the thread

  // Throws BadInput for a request the engine cannot run (Scheduler::validate). Thread-safe.
  void validate(const GenerationRequest& r) const { scheduler_.validate(r); }
  // Queues a request; nullptr when the queue is full. `id` receives its id; `x_request_id` is
  // the X-Request-Id it is served under (kept on its ServedRequest).
  // `stop` (optional): the request's stop strings, checked on the engine thread after each of
  // its tokens; a match ends it there with finish reason stop.
  std::shared_ptr<RequestStream> submit(GenerationRequest r, RequestId& id,
                                        std::string x_request_id = {},
                                        std::unique_ptr<TokenStop> stop = nullptr);
  // Drops a request (client gone); its blocks are freed before the next step.
  void cancel(RequestId id);
  // Every queued and running request ends with finish reason abort.
  void abort_all();
  // No request queued, running or streaming.
  bool idle() const;
  EngineCounters counters() const;
  const SchedulerOptions& options() const { return scheduler_.options(); }
  // Hands every later step and finished request to `log` (nullptr: none); `log` must outlive
  // the loop or be unset first. Thread-safe.
  void set_log(EngineLog* log);
  // The logs so far (copies; bounded: the oldest half goes past a million entries).
  std::vector<StepStats> step_log() const;
  std::vector<ServedRequest> request_log() const;
  // The energy of the busy step spans so far (tokens: output tokens generated in them) and the
  // spans lost to a failed read; nullopt without a meter.
  struct Energy {
    PhaseEnergy busy;
    int failed_spans = 0;
  };
  std::optional<Energy> energy() const;
  // The shortest span of steps the energy counter is read around: several of the counter's
  // updates, which NVML does not specify (energy_update_ms measures it; docs/metrics.md).
  static constexpr std::chrono::milliseconds kEnergySpan{100};

 private:
  void run();
  void finish_stream(RequestId id, StreamEvent e, const RequestTimes& times);
  // With mu_ held, after a step: its tokens to the streams (or, when the step threw, `failure`
  // to every stream), the step to the log, and the counters.
  void publish_step(const std::string& failure, std::vector<RequestUpdate>& updates,
                    StepStats& st);
  // Hands the trace's finished records to the log (engine thread, mu_ not held).
  void publish_trace(bool idle);
  // running/waiting/KV-block gauges from the scheduler (under mu_): after a step's batch is
  // chosen and again after the step.
  void publish_queue_gauges();

  Scheduler scheduler_;
  std::chrono::steady_clock::time_point origin_;  // the scheduler's: arrival stamps count from it
  int max_waiting_;
  int omp_threads_;
  std::unique_ptr<ServeTrace> trace_;  // serve --trace; used on the engine thread only
  std::unique_ptr<StepSpanEnergy> spans_;  // with a meter; used on the engine thread only
  std::thread thread_;
  mutable std::mutex mu_;  // everything below
  std::condition_variable cv_;
  bool stop_ = false, abort_all_ = false;
  RequestId next_id_ = 1;
  std::vector<std::pair<RequestId, GenerationRequest>> inbox_;
  std::vector<RequestId> cancels_;
  struct Live {  // a request queued or running
    std::shared_ptr<RequestStream> stream;
    int prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
    std::string x_request_id;
    std::unique_ptr<TokenStop> stop;  // stop strings
  };
  std::map<RequestId, Live> streams_;
  EngineCounters counters_;
  EngineLog* log_ = nullptr;
  std::vector<StepStats> steps_;
  std::vector<ServedRequest> requests_;
  std::optional<Energy> energy_;  // spans_'s totals, copied after each step
};

}  // namespace llmbench
