// The engine thread (see engine_loop.h).
#include "tools/serve/engine_loop.h"

#include <omp.h>

#include <algorithm>
#include <exception>

namespace llmbench {

namespace {
// The in-memory logs keep at most this many entries; past it the oldest half goes (a
// long-running server keeps bounded memory; the database, when there is one, has every row).
constexpr std::size_t kMaxLog = 1 << 20;

template <class T>
void append_bounded(std::vector<T>& log, T item) {
  if (log.size() >= kMaxLog) log.erase(log.begin(), log.begin() + std::ptrdiff_t(kMaxLog / 2));
  log.push_back(std::move(item));
}
}  // namespace

void RequestStream::push(StreamEvent e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(e));
  }
  cv_.notify_all();
}

void RequestStream::wait(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !events_.empty(); });
  while (!events_.empty()) {
    out.push_back(std::move(events_.front()));
    events_.pop_front();
  }
}

EngineLoop::EngineLoop(const Model& model, const SchedulerOptions& options, int max_waiting,
                       std::chrono::steady_clock::time_point origin, int omp_threads,
                       TraceLevel trace, const EnergyMeter* energy)
    : scheduler_(model, options, origin), origin_(origin), max_waiting_(max_waiting),
      omp_threads_(omp_threads) {
  if (energy) {
    spans_ = std::make_unique<StepSpanEnergy>(*energy, kEnergySpan);
    energy_ = Energy{};
  }
  if (trace != TraceLevel::kOff) {
    trace_ = std::make_unique<ServeTrace>(trace, model.backend(), origin);
    trace_->attach(scheduler_);
  }
  counters_.kv_blocks_total = scheduler_.blocks_total();
  counters_.kv_pool_bytes = scheduler_.kv_pool_bytes();
  thread_ = std::thread([this] { run(); });
}

EngineLoop::~EngineLoop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = abort_all_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<RequestStream> EngineLoop::submit(GenerationRequest r, RequestId& id,
                                                  std::string x_request_id,
                                                  std::unique_ptr<TokenStop> stop) {
  auto stream = std::make_shared<RequestStream>();
  // Arrival is now, not when the engine thread gets to it between steps.
  r.arrival_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now() - origin_)
                     .count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || int(inbox_.size()) + counters_.waiting >= max_waiting_) return nullptr;
    id = next_id_++;
    streams_[id] = Live{stream, int(r.prompt.size()), 0, 0, std::move(x_request_id)};
    streams_[id].stop = std::move(stop);
    inbox_.emplace_back(id, std::move(r));
    ++counters_.waiting;
  }
  cv_.notify_all();
  return stream;
}

void EngineLoop::cancel(RequestId id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(id);
  }
  cv_.notify_all();
}


void EngineLoop::abort_all() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abort_all_ = true;
  }
  cv_.notify_all();
}

bool EngineLoop::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.empty();
}

EngineCounters EngineLoop::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

void EngineLoop::set_log(EngineLog* log) {
  std::lock_guard<std::mutex> lock(mu_);
  log_ = log;
}

std::vector<StepStats> EngineLoop::step_log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_;
}

std::vector<ServedRequest> EngineLoop::request_log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::optional<EngineLoop::Energy> EngineLoop::energy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return energy_;
}

// Called with mu_ held.
void EngineLoop::finish_stream(RequestId id, StreamEvent e, const RequestTimes& times) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  e.prompt_tokens = it->second.prompt_tokens;  // an abort carries no counts of its own
  e.completion_tokens = std::max(e.completion_tokens, it->second.completion_tokens);
  e.cached_tokens = std::max(e.cached_tokens, it->second.cached_tokens);
  switch (e.finish) {
    case FinishReason::kLength: ++counters_.finished_length; break;
    case FinishReason::kStop: ++counters_.finished_stop; break;
    default: ++counters_.finished_abort; break;
  }
  const ServedRequest record{id, e.prompt_tokens, e.completion_tokens, e.finish, times,
                              e.cached_tokens, it->second.x_request_id};
  if (log_) log_->on_request(record);
  append_bounded(requests_, record);
  it->second.stream->push(std::move(e));
  streams_.erase(it);
}

void EngineLoop::publish_step(const std::string& failure, std::vector<RequestUpdate>& updates,
                              StepStats& st) {
  if (!failure.empty()) {
    // The engine failed: every request ends with the error; the server keeps serving.
    for (auto& [id, live] : streams_) scheduler_.abort(id);
    while (!streams_.empty()) {
      StreamEvent ev;
      ev.finish = FinishReason::kAbort;
      ev.error = "engine step failed: " + failure;
      finish_stream(streams_.begin()->first, std::move(ev), {});
    }
  }
  for (RequestUpdate& u : updates) {
    StreamEvent ev;
    ev.token = u.token;
    ev.finish = u.finish;
    ev.prompt_tokens = u.prompt_tokens;
    ev.cached_tokens = u.cached_tokens;
    ev.completion_tokens = u.completion_tokens;
    ev.logprobs = std::move(u.logprobs);
    ev.stop_token = u.stop_token;
    ++counters_.generation_tokens_total;
    if (auto it = streams_.find(u.id);
        u.token && it != streams_.end() && it->second.stop && it->second.stop->feed(*u.token)) {
      // A stop string completed by this token: the request ends here, between steps (on its
      // last token, its finish reason is stop, not length).
      if (u.finish == FinishReason::kNone && scheduler_.abort(u.id, &u.times))
        u.finish = ev.finish = FinishReason::kStop;
      else if (u.finish == FinishReason::kLength)
        u.finish = ev.finish = FinishReason::kStop;
    }
    if (u.finish != FinishReason::kNone) {
      finish_stream(u.id, std::move(ev), u.times);
    } else if (auto it = streams_.find(u.id); it != streams_.end()) {
      it->second.completion_tokens = u.completion_tokens;
      it->second.cached_tokens = u.cached_tokens;
      it->second.stream->push(std::move(ev));
    }
  }
  if (st.step > 0) {
    counters_.prompt_tokens_total += st.prefill_tokens;
    ++counters_.steps_total;
    counters_.step_ns_total += st.total_ns;
    counters_.forward_ns_total += st.forward_ns;
    if (log_) log_->on_step(st);
    st.members = {};  // the in-memory log stays small: members go to the database only
    append_bounded(steps_, st);
  }
  publish_queue_gauges();
  counters_.prefix_query_tokens_total = scheduler_.prefix_query_tokens();
  counters_.prefix_hit_tokens_total = scheduler_.prefix_hit_tokens();
}

void EngineLoop::publish_trace(bool idle) {
  if (!trace_) return;
  std::vector<OpRecord> records = trace_->collect(scheduler_, idle);
  if (records.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (log_) log_->on_trace(std::move(records));
}

void EngineLoop::publish_queue_gauges() {
  counters_.running = scheduler_.running();
  counters_.waiting = scheduler_.waiting() + int(inbox_.size());
  counters_.kv_blocks_used = scheduler_.blocks_used();
  counters_.kv_blocks_cached = scheduler_.blocks_cached();
}

void EngineLoop::run() {
  if (omp_threads_ > 0) omp_set_num_threads(omp_threads_);
  std::vector<std::pair<RequestId, GenerationRequest>> adds;
  std::vector<RequestId> cancels;
  for (;;) {
    bool abort_everything = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(100), [&] {
        return stop_ || abort_all_ || !inbox_.empty() || !cancels_.empty() || !scheduler_.idle();
      });
      if (stop_ && scheduler_.idle() && inbox_.empty()) break;
      adds.swap(inbox_);
      cancels.swap(cancels_);
      abort_everything = abort_all_;
      abort_all_ = false;
    }
    // Requests in: queue them (a request validated by the HTTP thread may still fail here if
    // the engine's limits say so) and drop cancelled ones.
    for (auto& [id, req] : adds) {
      const int prompt_tokens = int(req.prompt.size());
      try {
        scheduler_.add(id, std::move(req));
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu_);
        --counters_.waiting;
        StreamEvent ev;
        ev.finish = FinishReason::kAbort;
        ev.prompt_tokens = prompt_tokens;
        ev.error = e.what();
        finish_stream(id, std::move(ev), {});
      }
    }
    adds.clear();
    if (abort_everything) {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [id, live] : streams_) cancels.push_back(id);
    }
    for (RequestId id : cancels) {
      RequestTimes times;
      if (!scheduler_.abort(id, &times)) continue;
      std::lock_guard<std::mutex> lock(mu_);
      StreamEvent ev;
      ev.finish = FinishReason::kAbort;
      finish_stream(id, std::move(ev), times);
    }
    cancels.clear();
    if (scheduler_.idle()) {
      publish_trace(/*idle=*/true);
      // Requests cancelled or aborted between steps left the engine idle: close the span.
      if (spans_) spans_->after_step(0, true);
      std::lock_guard<std::mutex> lock(mu_);
      if (spans_) energy_ = Energy{spans_->total(), spans_->failed_spans()};
      counters_.running = 0;
      counters_.waiting = int(inbox_.size());
      counters_.kv_blocks_used = scheduler_.blocks_used();
      continue;
    }

    StepStats st;
    std::vector<RequestUpdate> updates;
    std::string failure;
    if (spans_) spans_->before_step();
    try {
      updates = scheduler_.step(&st, [this] {
        std::lock_guard<std::mutex> lock(mu_);
        publish_queue_gauges();
      });
    } catch (const std::exception& e) {
      failure = e.what();
    }
    const auto tokens = std::count_if(updates.begin(), updates.end(),
                                      [](const RequestUpdate& u) { return u.token.has_value(); });
    {
      std::lock_guard<std::mutex> lock(mu_);
      publish_step(failure, updates, st);
    }
    if (spans_) {
      // After the step's tokens are on the host (the step has synchronised) and after
      // publish_step, whose stop strings may have ended the last requests: an idle engine
      // closes its span here, before it waits for work.
      spans_->after_step(std::int64_t(tokens), scheduler_.idle());
      std::lock_guard<std::mutex> lock(mu_);
      energy_ = Energy{spans_->total(), spans_->failed_spans()};
    }
    if (failure.empty()) publish_trace(/*idle=*/false);
  }
}

}  // namespace llmbench
