// One load invocation's shared state and the running of one level (see load_session.h).
#include "tools/load/load_session.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <random>

#include "engine/checkpoint/json_input.h"
#include "kernels/common/error.h"
#include "tools/load/load_driver.h"
#include "tools/load/load_progress.h"
#include "tools/load/metrics_scrape.h"
#include "tools/load/server_metrics_store.h"
#include "tools/load/sweep_store.h"
#include "tools/load/vllm_json.h"
#include "tools/console/signals.h"
#include "tools/store/run_info.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {

namespace {

// http://host:port[/...] -> http://host:port
std::string base_of(const std::string& url) {
  const auto slash = url.find('/', 7);
  return slash == std::string::npos ? url : url.substr(0, slash);
}

std::string endpoint_path(bool chat) { return chat ? "/v1/chat/completions" : "/v1/completions"; }

struct Probe {
  bool token_ids = true;
  std::string note;  // why text prompts are used
};

// One small non-streamed request: token ids first (completions only), then text.
Probe probe_server(const std::string& url, const std::string& model, bool chat, bool ignore_eos,
                   double timeout_s, const std::string& api_key) {
  const std::vector<std::int32_t> ids = {16, 17, 18, 19};
  Probe p;
  if (!chat) {
    const HttpResponse r = http_post_json(
        url, request_body(model, false, true, ids, 1, ignore_eos, false), timeout_s, api_key);
    if (r.status == 200) return p;
    if (r.status == 0) throw BadInput("--url: cannot reach " + url + ": " + r.error);
    p.note = fmt::format("the server refused a token-id prompt (HTTP {}: {}); sending synthetic "
                         "text prompts", r.status, r.body.substr(0, 160));
  }
  p.token_ids = false;
  const HttpResponse r = http_post_json(
      url, request_body(model, chat, false, ids, 1, ignore_eos, false), timeout_s, api_key);
  if (r.status == 0) throw BadInput("--url: cannot reach " + url + ": " + r.error);
  if (r.status != 200)
    throw BadInput(fmt::format("--url: {} refused the probe request (HTTP {}: {})", url, r.status,
                               r.body.substr(0, 300)));
  return p;
}

std::string first_model(const std::string& base, double timeout_s) {
  const HttpResponse r = http_get(base + "/v1/models", timeout_s);
  if (r.status == 0) throw BadInput("--url: cannot reach " + base + ": " + r.error);
  const auto j = parse_json(r.body).value;
  if (r.status != 200 || !j.is_object() || !j.contains("data") || !j["data"].is_array() ||
      j["data"].empty() || !j["data"][0].contains("id") || !j["data"][0]["id"].is_string())
    throw BadInput("--model: not given, and " + base + "/v1/models did not list a model (HTTP " +
                   std::to_string(r.status) + "); pass --model NAME");
  return j["data"][0]["id"].get<std::string>();
}

std::int64_t unix_ns_at(std::chrono::steady_clock::time_point t) {
  const auto since = std::chrono::steady_clock::now() - t;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             (std::chrono::system_clock::now() - since).time_since_epoch())
      .count();
}

// vLLM's result date: "%Y%m%d-%H%M%S" (UTC here).
std::string utc_date_compact() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

bool stop_requested() { return ScopedInterruptHandler::signal_received() != 0; }

}  // namespace

LoadSession::LoadSession(const LoadPlan& plan, const std::string& command_line)
    : plan_(plan), o_(plan.opt), command_line_(command_line), chat_(plan.opt.endpoint == "chat"),
      url_(plan.opt.url) {
  std::random_device rd;
  id_tag_ = fmt::format("{:08x}{:08x}", rd(), rd());
  // A file workload is read before any server starts, so a bad file costs nothing.
  file_ = open_file_workload(plan_, [this](const std::string& line) { note(line); });
  if (!o_.server_cmd.empty()) start_server();
  base_ = base_of(url_);
  const std::string target = base_ + endpoint_path(chat_);
  const char* key_env = std::getenv("OPENAI_API_KEY");
  api_key_ = key_env ? key_env : "";
  model_ = o_.model.empty() ? first_model(base_, o_.connect_timeout_s + 30) : o_.model;
  const Probe probe = probe_server(target, model_, chat_, o_.ignore_eos,
                                   o_.connect_timeout_s + o_.first_byte_timeout_s, api_key_);
  if (!probe.note.empty()) note(probe.note);
  token_ids_ = probe.token_ids;
  if (file_)
    file_->bodies = std::make_unique<SessionBodies>(
        file_->workload, BodyOptions{model_, chat_, token_ids_, o_.ignore_eos,
                                     o_.use_server_responses, std::int64_t(o_.think_time_ms),
                                     !o_.no_stream});
  metrics_url_ = metrics_url(o_.server_metrics, base_);

  store_ = std::make_unique<LoadStore>(o_.db);
  info_ = LoadRunInfo{command_line, o_.label.empty() ? model_ : o_.label, target, o_.endpoint,
                      model_, server_cmd_,
                      file_ ? file_->bodies->prompt_kind() : chat_ ? "chat" : token_ids_ ? "token_ids" : "text",
                      file_ ? file_->lengths : ""};
  run_id_ = store_->begin_run(plan_, info_);
  store_run_stream(store_->db(), run_id_, !o_.no_stream);
  store_run_sweep(store_->db(), run_id_, plan_.slo_sweep ? "slo" : "list",
                  plan_.slo_sweep ? std::optional<double>(o_.goodput_target) : std::nullopt,
                  metrics_url_);

  ClientOptions copt;
  copt.url = target;
  copt.chat = chat_;
  copt.connect_timeout_s = o_.connect_timeout_s;
  copt.first_byte_timeout_s = o_.first_byte_timeout_s;
  copt.idle_timeout_s = o_.idle_timeout_s;
  copt.request_timeout_s = o_.request_timeout_s;
  copt.api_key = api_key_;
  copt.stream = !o_.no_stream;
  client_ = std::make_unique<LoadClient>(copt);
}

LoadSession::~LoadSession() = default;  // ServerProcess's destructor stops a server still up

void LoadSession::note(const std::string& line) const {
  if (!o_.quiet) fmt::print(stderr, "load: {}\n", line);
}

// The server, when we start it: {port} picks the port, and --url follows from it.
void LoadSession::start_server() {
  server_cmd_ = o_.server_cmd;
  if (server_cmd_.find("{port}") != std::string::npos) {
    const int port = pick_free_port();
    server_cmd_ = substitute_port(server_cmd_, port);
    if (url_.empty()) url_ = "http://127.0.0.1:" + std::to_string(port);
  }
  note("starting the server: " + server_cmd_);
  server_ = std::make_unique<ServerProcess>(server_cmd_);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    server_->wait_healthy(base_of(url_) + "/health", o_.server_timeout_s, stop_requested);
  } catch (const Error& e) {
    server_->stop(5);
    throw BadInput(e.what());
  }
  note(fmt::format("server healthy after {:.2f} s at {}",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                   base_of(url_)));
}

double LoadSession::requests_per_arrival() const {
  if (!file_ || !file_->workload.multi_turn || file_->workload.sessions.empty()) return 1;
  std::size_t turns = 0;
  for (const WorkloadSession& s : file_->workload.sessions) turns += s.turns.size();
  return double(turns) / double(file_->workload.sessions.size());
}

std::optional<LevelResult> LoadSession::measure(const LevelSpec& level, const std::string& tag,
                                                const std::string& sweep_role) {
  RequestSource source(level, o_.input_len_stddev, o_.output_len_stddev, o_.seed);
  LevelDrive drive;
  drive.duration_s = o_.duration_s;
  drive.should_stop = stop_requested;
  drive.request_id_prefix = fmt::format("{}-{}", id_tag_, level.index);
  drive.make_body = [&](int, RequestRecord& rec) {
    const RequestShape shape = source.next();
    rec.input_len = shape.input_len;
    rec.max_tokens = shape.output_len;
    return request_body(model_, chat_, token_ids_, shape.prompt_ids, shape.output_len,
                        o_.ignore_eos, !o_.no_stream);
  };
  if (file_) drive_file_level(*file_, level, o_, drive);
  if (level.mode == LoadMode::kConcurrency) drive.concurrency = level.concurrency;
  else drive.max_in_flight = o_.max_concurrency;
  // The saturation guard watches rate levels (at an infinite rate every request is sent at
  // once: a queue by design). An SLO probe that is over capacity has failed: it stops there.
  if (level.mode == LoadMode::kRate && std::isfinite(level.request_rate) && !o_.no_stream) {
    SaturationParams sp;
    sp.window_s = o_.saturation_window_s;
    drive.saturation = sp;
    drive.stop_on_saturation = o_.stop_on_saturation || sweep_role == "probe";
  }
  if (!warm_up(level, drive)) {
    interrupted_ = true;
    return std::nullopt;
  }
  if (!file_) {
    drive.max_requests = plan_.num_requests;
    if (level.mode == LoadMode::kRate)
      drive.arrival_s = arrival_offsets_s(plan_.num_requests, level.request_rate,
                                          level.burstiness, o_.seed + std::uint64_t(level.index));
  }
  LevelOutcome outcome;
  std::optional<ScrapeLog> scraped;
  {
    // The total is known in requests unless sessions have several turns or --duration bounds it.
    const int total = drive.turns || o_.duration_s > 0 ? 0 : drive.max_requests;
    LevelProgress progress(tag + " " + level.label(), total, o_.duration_s, o_.quiet,
                           isatty(STDERR_FILENO) == 1);
    drive.progress = progress.callback();
    drive.progress_interval_s = progress.interval_s();
    std::optional<MetricsScraper> scraper;
    if (!metrics_url_.empty())
      scraper.emplace(metrics_url_, o_.metrics_interval_ms,
                      std::max<std::size_t>(1, kMaxServerSeriesPerRun - series_kept_),
                      o_.metrics_timeout_s);
    outcome = client_->run(drive);
    if (scraper) {
      scraped = scraper->stop();
      series_kept_ = std::min(kMaxServerSeriesPerRun, series_kept_ + scraped->series.size());
    }
  }
  if (outcome.interrupted) {
    interrupted_ = true;
    return std::nullopt;
  }
  if (auto lag = schedule_lag(outcome.requests)) {
    const std::string warning =
        schedule_lag_warning(*lag, level.mode == LoadMode::kRate ? o_.max_concurrency : 0);
    if (!warning.empty()) fmt::print(stderr, "load: {}\n", warning);
  }
  LevelResult r = record(level, outcome, scraped, tag, sweep_role);
  if (server_) {
    if (auto s = server_->exited()) server_died_ = *s;
  }
  return r;
}

// The same shape of load before the measured requests: not measured, not stored.
bool LoadSession::warm_up(const LevelSpec& level, const LevelDrive& drive) {
  if (o_.warmup_requests <= 0) return true;
  LevelDrive warm = drive;
  warm.request_id_prefix += "-warmup";  // never the id of a measured request
  warm.max_requests = o_.warmup_requests;
  warm.duration_s = 0;
  if (level.mode == LoadMode::kRate)
    warm.arrival_s = arrival_offsets_s(o_.warmup_requests, level.request_rate, level.burstiness,
                                       o_.seed + 7919 * std::uint64_t(level.index + 1));
  if (file_) drive_file_level(*file_, level, o_, warm, o_.warmup_requests);
  return !client_->run(warm).interrupted;
}

// Summarises, stores and reports one finished level.
LevelResult LoadSession::record(const LevelSpec& level, const LevelOutcome& outcome,
                                const std::optional<ScrapeLog>& scraped, const std::string& tag,
                                const std::string& sweep_role) {
  LevelResult r;
  r.spec = level;
  r.summary = summarize_level(outcome.requests, plan_.goodput);
  r.steady = steady_window(outcome.requests, level);
  r.over_capacity = outcome.over_capacity;
  if (outcome.saturation_ns) r.saturation_s = double(*outcome.saturation_ns) / 1e9;
  r.stopped_early = outcome.stopped_early;
  for (const RequestRecord& q : outcome.requests) r.aborted += q.error == kAbortedOverCapacity;
  const auto duration_ns = std::int64_t(std::llround(r.summary.duration_s * 1e9));
  // A level that cannot be stored (a full disk, a lock held past the busy timeout) is still
  // reported below; the run is marked failed at the end and nothing more is stored.
  if (store_failed_.empty()) {
    try {
      r.level_id = store_->add_level(run_id_, level, o_.max_concurrency, outcome.requests,
                                     duration_ns, unix_ns_at(outcome.origin));
      store_level_sweep(store_->db(), r, sweep_role);
      store_level_capacity(store_->db(), r);
      if (scraped)
        store_server_metrics(store_->db(), r.level_id, metrics_url_, *scraped, outcome.origin);
    } catch (const std::exception& e) {
      const auto reason = write_failure_reason(e);
      std::string why = reason ? *reason : std::string(e.what());
      if (why.find("database is locked") != std::string::npos)
        why = "another process holds the database lock";
      if (why.size() > 160) why = why.substr(0, 157) + "...";
      store_failed_ = why;
      r.level_id = -1;
      fmt::print(stderr, "load: --db '{}': cannot store {} ({}); its results are printed below, "
                 "later levels are not stored and the run is marked failed\n", o_.db, tag, why);
    }
  }
  if (o_.format == "vllm-json")
    r.vllm = vllm_result_json(level, o_.max_concurrency, outcome.requests, plan_.goodput,
                              {chat_ ? "openai-chat" : "openai", model_, utc_date_compact(),
                               plan_.goodput.any(), info_.label});
  if (scraped) {
    if (scraped->failed_scrapes > 0 || scraped->rejected_lines > 0)
      note(fmt::format("{} /metrics: {} of {} scrapes failed, {} malformed lines refused ({})", tag,
                       scraped->failed_scrapes, scraped->scrapes + scraped->failed_scrapes,
                       scraped->rejected_lines, scraped->first_problem));
    // Caps are reported even with --quiet: the stored tracks are incomplete.
    if (scraped->oversize_scrapes > 0 || scraped->dropped_samples > 0)
      fmt::print(stderr, "load: {} /metrics: {} scrapes over {} MB dropped whole; {} samples of "
                 "series beyond the run's cap of {} series not stored\n", tag,
                 scraped->oversize_scrapes, MetricsScraper::kMaxScrapeBytes >> 20,
                 scraped->dropped_samples, kMaxServerSeriesPerRun);
  }
  // Printed even with --quiet: the level measured a queue, not the server.
  if (r.over_capacity.value_or(false)) {
    const auto& e = outcome.saturation_evidence;
    fmt::print(stderr, "warning: {} is over capacity from {:.1f} s: requests in flight rose {:.2f}/s "
               "(mean {:.1f}) and TTFT {:.1f} ms/s (median {:.1f} ms) over the last {:g} s; its "
               "figures describe a growing queue{}\n", tag, r.saturation_s.value_or(0),
               e.queue_slope_per_s, e.queue_mean, e.ttft_slope_ms_per_s, e.ttft_median_ms,
               o_.saturation_window_s,
               r.stopped_early ? " (the level stopped there: requests in flight were aborted)"
                               : "; --stop-on-saturation ends such a level early");
  }
  // Printed even with --quiet: it says how far the level's steady figures can be trusted.
  if (r.steady && r.steady->short_window)
    fmt::print(stderr, "warning: {} steady-state window is {:.1f} s of the level's {:.1f} s "
               "(shorter than max(10 s, 10% of the level)): its steady_* figures rest on little "
               "time; more requests (--num-requests) or --duration lengthen it\n",
               tag, r.steady->length_s, r.steady->level_s);
  if (!o_.quiet)
    fmt::print(stderr, "{} {} (elapsed {:.1f} s)\n", tag, level_progress_line(r),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start_).count());
  return r;
}

nlohmann::ordered_json LoadSession::run_json() const {
  nlohmann::ordered_json j;
  j["load_run_id"] = run_id_;
  j["git_commit"] = current_run_info().git_commit;
  j["label"] = info_.label;
  j["url"] = info_.url;
  j["endpoint"] = info_.endpoint;
  j["model"] = info_.model;
  j["prompt_kind"] = info_.prompt_kind;
  j["stream"] = !o_.no_stream;
  j["mode"] = mode_name(plan_.mode);
  j["dataset"] = o_.dataset_name;
  if (file_) j["lengths"] = file_->lengths;
  j["seed"] = o_.seed;
  j["goodput"] = goodput_text(plan_.goodput);
  j["sweep"] = plan_.slo_sweep ? "slo" : "list";
  j["server_metrics_url"] = metrics_url_.empty() ? nlohmann::ordered_json(nullptr)
                                                 : nlohmann::ordered_json(metrics_url_);
  j["command_line"] = command_line_;
  return j;
}

int LoadSession::finish(const std::vector<LevelResult>& results, int planned_levels,
                        const std::string& extra_line, const nlohmann::ordered_json& extra) {
  try {
    if (!store_failed_.empty()) {
      // After a failed write the WAL may be at the size a full disk allows; a checkpoint that
      // restarts it lets the one-row update below reuse its space instead of growing it.
      try {
        store_->db().exec("PRAGMA wal_checkpoint(RESTART)");
      } catch (const std::exception&) {
      }
    }
    store_->finish_run(run_id_, !store_failed_.empty() ? "failed"
                                : interrupted_         ? "interrupted"
                                                       : "complete");
  } catch (const std::exception&) {
    if (store_failed_.empty()) throw;
    fmt::print(stderr, "load: --db '{}': load run {} could not be marked failed either; it "
               "stays 'running'\n", o_.db, run_id_);
  }
  nlohmann::ordered_json run = run_json();
  if (extra.is_object())
    for (const auto& [k, v] : extra.items()) run[k] = v;
  print_load_results(std::cout, o_.format, results, plan_.goodput.any(), run);
  if (!extra_line.empty() && (o_.format == "table" || o_.format == "md"))
    std::cout << "\n" << extra_line << "\n";
  std::cout.flush();
  if (server_) {
    const std::string how = server_died_.empty() ? server_->stop(10) : server_died_;
    if (!server_died_.empty())
      fmt::print(stderr, "load: the server {} during the sweep; {} of {} levels ran\n",
                 server_died_, results.size(), planned_levels);
    else
      note("server stopped (" + how + ")");
  }
  if (interrupted_) {
    const int sig = ScopedInterruptHandler::signal_received();
    fmt::print(stderr, "interrupted: load run {} in {} has {} of {} levels stored\n", run_id_,
               o_.db, results.size(), planned_levels);
    return 128 + (sig ? sig : SIGINT);
  }
  if (!store_failed_.empty()) return 1;
  note(fmt::format("stored load run {} ({} level{}) in {}", run_id_, results.size(),
                   results.size() == 1 ? "" : "s", o_.db));
  if (!server_died_.empty()) return 1;
  int failed = 0, total = 0, aborted = 0;
  for (const auto& r : results)
    failed += r.summary.failed - r.aborted, total += r.summary.requests, aborted += r.aborted;
  // Aborted by --stop-on-saturation: asked for, so not a failure of the run.
  if (aborted > 0)
    note(fmt::format("{} requests in flight were aborted where --stop-on-saturation ended an "
                     "over-capacity level (stored as failed with that reason)", aborted));
  if (failed > 0) {
    fmt::print(stderr, "{} of {} requests failed (status 'error' in load_request, with the reason)\n",
               failed, total);
    return 1;
  }
  return 0;
}

}  // namespace llmbench
