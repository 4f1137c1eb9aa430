// The event loop of one level (see client_level.h).
#include "tools/load/client_level.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

#include "kernels/common/error.h"

namespace llmbench::client_detail {

namespace {
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
}  // namespace

LevelRun::LevelRun(CURLM* multi, curl_slist* headers, const ClientOptions& opt,
                   const LevelDrive& d)
    : multi_(multi), headers_(headers), opt_(opt), d_(d) {
  rate_mode_ = d.concurrency <= 0;
  multi_turn_ = bool(d.turns);
  cap_ = rate_mode_ ? (d.max_in_flight > 0 ? d.max_in_flight : 1 << 30) : d.concurrency;
  session_limit_ = rate_mode_ ? std::min(d.max_requests, int(d.arrival_s.size())) : d.max_requests;
  duration_ns_ = d.duration_s > 0 ? std::int64_t(d.duration_s * 1e9) : kNever;
  first_byte_ns_ = std::int64_t(opt.first_byte_timeout_s * 1e9);
  idle_ns_ = std::int64_t(opt.idle_timeout_s * 1e9);
  if (rate_mode_ && d.saturation) guard_.emplace(*d.saturation);
}

bool LevelRun::can_open_session() const {
  return !stop_starting_ && sessions_started_ < session_limit_ && sessions_open_ < cap_;
}

void LevelRun::start_turn(int session, int turn, std::int64_t scheduled_ns) {
  auto t = std::make_unique<Transfer>();
  t->origin = out_.origin;
  t->rec.index = started_;
  t->rec.session_index = session;
  t->rec.turn_index = turn;
  t->rec.scheduled_ns = scheduled_ns;
  t->body = d_.make_body(started_, t->rec);
  // What this response may cost, from what it asked for (max_tokens unknown: 4096).
  const std::size_t want = std::size_t(t->rec.max_tokens > 0 ? t->rec.max_tokens : 4096);
  t->max_events = want * std::size_t(std::max(1, opt_.events_per_token)) +
                  std::size_t(std::max(0, opt_.extra_events));
  t->sse_max_line = opt_.max_line_bytes;
  t->stream = opt_.stream;
  t->sse.set_max_line_bytes(opt_.max_line_bytes);
  // Every event at most a line; in practice a chunk is a few hundred bytes.
  t->max_body_bytes = opt_.max_line_bytes + t->max_events * std::size_t(4096);
  const double request_timeout_s =
      opt_.request_timeout_s > 0 ? opt_.request_timeout_s : 300.0 + double(want);
  CURL* e = curl_easy_init();
  if (!e) throw Error("curl_easy_init failed");
  t->easy = e;
  curl_easy_setopt(e, CURLOPT_URL, opt_.url.c_str());
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.c_str());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, long(t->body.size()));
  curl_slist* request_headers = headers_;
  if (!d_.request_id_prefix.empty()) {
    // The shared headers and this request's id: libcurl sends one list per handle.
    t->rec.x_request_id = d_.request_id_prefix + "-" + std::to_string(t->rec.index);
    for (const curl_slist* h = headers_; h; h = h->next) {
      curl_slist* grown = curl_slist_append(t->headers, h->data);
      if (!grown) throw Error("curl_slist_append failed");
      t->headers = grown;
    }
    const std::string line = "X-Request-Id: " + t->rec.x_request_id;
    curl_slist* grown = curl_slist_append(t->headers, line.c_str());
    if (!grown) throw Error("curl_slist_append failed");
    request_headers = t->headers = grown;
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, request_headers);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long(opt_.connect_timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long(CURL_HTTP_VERSION_1_1));
  t->rec.send_ns = since(out_.origin, Clock::now());
  t->deadline_ns = t->rec.send_ns + std::int64_t(request_timeout_s * 1e9);
  if (curl_multi_add_handle(multi_, e) != CURLM_OK) throw Error("curl_multi_add_handle failed");
  active_.push_back(t.release());
  ++started_;
}

// Later turns first (their sessions already hold a slot), then new sessions.
void LevelRun::start_due(std::int64_t now) {
  if (stop_starting_) return;
  if (now >= duration_ns_) {
    stop_starting_ = true;
    sessions_open_ -= int(pending_.size());  // sessions waiting for a turn end here
    pending_ = decltype(pending_)();
    return;
  }
  while (!pending_.empty() && pending_.top().due_ns <= now) {
    const PendingTurn p = pending_.top();
    pending_.pop();
    start_turn(p.session, p.turn, p.due_ns);
  }
  while (can_open_session()) {
    std::int64_t scheduled = -1;
    if (rate_mode_) {
      scheduled = std::int64_t(d_.arrival_s[std::size_t(sessions_started_)] * 1e9);
      if (scheduled > now) break;
    }
    ++sessions_open_;
    start_turn(sessions_started_++, 0, scheduled);
  }
}

// A finished request: out of the multi handle; a multi-turn session's next turn is queued.
void LevelRun::retire(Transfer* t) {
  curl_multi_remove_handle(multi_, t->easy);
  active_.erase(std::find(active_.begin(), active_.end(), t));
  done_.emplace_back(t);
  ++finished_;
  if (guard_) {
    guard_->ramp_done(since(out_.origin, Clock::now()));
    if (t->first_event_ns >= 0 && !t->ttft_seen)
      guard_->add_ttft(t->first_event_ns, t->first_event_ns - t->rec.send_ns);
    t->ttft_seen = true;
  }
  if (t->first_event_ns >= 0) live_.first_event_ns.push_back(t->first_event_ns - t->rec.send_ns);
  // Only the tail can be [DONE] or a usage-only event: two string checks, not a scan.
  std::size_t n = t->events.size();
  if (n > 0 && t->events[n - 1].data == "[DONE]") --n;
  if (n > 0 && t->events[n - 1].data.find("\"choices\":[]") != std::string::npos) --n;
  live_.output_events += (long long)n;
  const RequestRecord& r = t->rec;
  if (multi_turn_) {
    finish_record(*t, opt_.chat, opt_.keep_events, /*collect_text=*/true);
    t->parsed = true;
    if (d_.on_turn_done) d_.on_turn_done(r);
    const int next = r.turn_index + 1;
    if (r.ok && next < turns_of(r.session_index) && !stop_starting_) {
      const std::int64_t think = d_.think_ns ? d_.think_ns(r.session_index, next) : 0;
      pending_.push({r.end_ns + std::max<std::int64_t>(0, think), r.session_index, next});
      return;
    }
  }
  --sessions_open_;
}

void LevelRun::collect_finished() {
  int running = 0;
  curl_multi_perform(multi_, &running);
  int left = 0;
  while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
    if (m->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    t->result = m->data.result;
    long code = 0;
    curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
    t->rec.http_status = int(code);
    t->rec.end_ns = t->last_data_ns >= 0 ? t->last_data_ns : since(out_.origin, Clock::now());
    if (t->result != CURLE_OK || code != 200) ++failed_transport_;
    retire(t);
  }
}

// First byte and idle stream (libcurl enforces the connect timeout), checked every 2 ms.
void LevelRun::check_timeouts(Clock::time_point now) {
  if (now - last_timeout_check_ <= std::chrono::milliseconds(2)) return;
  last_timeout_check_ = now;
  const std::int64_t t_now = since(out_.origin, now);
  for (std::size_t i = 0; i < active_.size();) {
    Transfer* t = active_[i];
    if (guard_ && t->first_event_ns >= 0 && !t->ttft_seen) {
      t->ttft_seen = true;
      guard_->add_ttft(t->first_event_ns, t->first_event_ns - t->rec.send_ns);
    }
    if (t_now > t->deadline_ns)
      t->timeout = fmt::format("request deadline: not finished {:g} s after it was sent "
                               "(--request-timeout) after {} events",
                               double(t->deadline_ns - t->rec.send_ns) / 1e9, t->events.size());
    else if (t->last_data_ns < 0 && t_now - t->rec.send_ns > first_byte_ns_)
      t->timeout = fmt::format("first-byte timeout: no response body within {:g} s",
                               opt_.first_byte_timeout_s);
    else if (t->last_data_ns >= 0 && t_now - t->last_data_ns > idle_ns_)
      t->timeout = fmt::format("idle timeout: no data for {:g} s after {} events",
                               opt_.idle_timeout_s, t->events.size());
    if (t->timeout.empty()) {
      ++i;
      continue;
    }
    t->rec.end_ns = t_now;
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    t->rec.http_status = int(code);
    ++failed_transport_;
    retire(t);  // removes it from active_: do not advance i
  }
}

std::int64_t LevelRun::next_due_ns() const {
  std::int64_t due = pending_.empty() ? kNever : pending_.top().due_ns;
  if (rate_mode_ && can_open_session())
    due = std::min(due, std::int64_t(d_.arrival_s[std::size_t(sessions_started_)] * 1e9));
  return due;
}

// Sleeps until a socket is ready, the next start is due, or a timeout check is due.
void LevelRun::wait_for_work() {
  const std::int64_t now = since(out_.origin, Clock::now());
  std::int64_t wait_ns = 10'000'000;
  if (!stop_starting_) {
    const std::int64_t due = next_due_ns();
    if (due != kNever) wait_ns = std::min(wait_ns, due - now);
    if (duration_ns_ != kNever) wait_ns = std::min(wait_ns, duration_ns_ - now);
  }
  if (wait_ns >= 1'000'000 || !active_.empty()) {
    // Poll in whole ms; a start less than 1 ms away is waited for by the next pass.
    int numfds = 0;
    curl_multi_poll(multi_, nullptr, 0, int(std::max<std::int64_t>(0, wait_ns / 1'000'000)),
                    &numfds);
  }
}

bool LevelRun::finished() const {
  const bool all_started = stop_starting_ || sessions_started_ >= session_limit_;
  return all_started && pending_.empty() && active_.empty();
}

// Parses every stream now that the timed loop is over; records in start order.
void LevelRun::finish_outcome() {
  std::sort(done_.begin(), done_.end(),
            [](const auto& a, const auto& b) { return a->rec.index < b->rec.index; });
  out_.requests.reserve(done_.size());
  for (auto& t : done_) {
    if (!t->parsed) finish_record(*t, opt_.chat, opt_.keep_events, false);
    out_.requests.push_back(std::move(t->rec));
    t.reset();
  }
}

LevelOutcome LevelRun::run() {
  out_.origin = Clock::now();
  last_progress_ = last_timeout_check_ = out_.origin;
  while (true) {
    if (d_.should_stop && d_.should_stop()) {
      out_.interrupted = true;
      break;
    }
    start_due(since(out_.origin, Clock::now()));
    if (finished()) break;
    collect_finished();
    const Clock::time_point after = Clock::now();
    check_timeouts(after);
    watch_saturation(since(out_.origin, after));
    if (d_.progress && after - last_progress_ >= std::chrono::duration<double>(d_.progress_interval_s)) {
      last_progress_ = after;
      report_progress(after);
    }
    // A finished request frees a slot: start the next one at once (concurrency mode).
    if (!rate_mode_ && can_open_session()) continue;
    wait_for_work();
  }
  // Interrupted: abort what is in flight.
  for (Transfer* t : std::vector<Transfer*>(active_)) {
    t->timeout = "interrupted";
    t->rec.end_ns = since(out_.origin, Clock::now());
    retire(t);
  }
  if (guard_) {
    if (guard_->judged()) out_.over_capacity = guard_->fired();
    out_.saturation_ns = guard_->fired_at_ns();
    out_.saturation_evidence = guard_->evidence();
  }
  finish_outcome();
  if (d_.progress) report_progress(Clock::now());
  return std::move(out_);
}

// Every 100 ms: the requests in flight; then the guard's check (once a second). When it fires
// with stop_on_saturation, no request starts any more and those in flight are aborted.
void LevelRun::watch_saturation(std::int64_t now) {
  if (!guard_ || guard_->fired() || now < next_sample_ns_) return;
  next_sample_ns_ = now + 100'000'000;
  guard_->add_in_flight(now, int(active_.size()));
  if (!guard_->check(now) || !d_.stop_on_saturation) return;
  stop_starting_ = true;
  out_.stopped_early = true;
  sessions_open_ -= int(pending_.size());  // sessions waiting for a later turn end here
  pending_ = decltype(pending_)();
  for (Transfer* t : std::vector<Transfer*>(active_)) {
    t->timeout = kAbortedOverCapacity;
    t->rec.end_ns = now;
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    t->rec.http_status = int(code);
    retire(t);
  }
}

void LevelRun::report_progress(Clock::time_point now) {
  live_.started = started_;
  live_.finished = finished_;
  live_.failed = failed_transport_;
  live_.elapsed_ns = since(out_.origin, now);
  d_.progress(live_);
}

}  // namespace llmbench::client_detail
