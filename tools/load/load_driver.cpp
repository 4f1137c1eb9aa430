// The `llmbench load` driver (see load_driver.h).
#include "tools/load/load_driver.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "kernels/common/error.h"
#include "tools/load/load_client.h"
#include "tools/load/load_output.h"
#include "tools/load/load_store.h"
#include "tools/load/server_process.h"
#include "tools/load/workload_level.h"
#include "tools/run/signals.h"

namespace llmbench {

namespace {

// http://host:port[/...] -> http://host:port
std::string base_url(const std::string& url) {
  const auto slash = url.find('/', 7);
  std::string b = slash == std::string::npos ? url : url.substr(0, slash);
  return b;
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
    const HttpResponse r =
        http_post_json(url, request_body(model, false, true, ids, 1, ignore_eos, false), timeout_s, api_key);
    if (r.status == 200) return p;
    if (r.status == 0) throw BadInput("--url: cannot reach " + url + ": " + r.error);
    p.note = fmt::format("the server refused a token-id prompt (HTTP {}: {}); sending synthetic "
                         "text prompts", r.status, r.body.substr(0, 160));
  }
  p.token_ids = false;
  const HttpResponse r =
      http_post_json(url, request_body(model, chat, false, ids, 1, ignore_eos, false), timeout_s, api_key);
  if (r.status == 0) throw BadInput("--url: cannot reach " + url + ": " + r.error);
  if (r.status != 200)
    throw BadInput(fmt::format("--url: {} refused the probe request (HTTP {}: {})", url, r.status,
                               r.body.substr(0, 300)));
  return p;
}

std::string first_model(const std::string& base, double timeout_s) {
  const HttpResponse r = http_get(base + "/v1/models", timeout_s);
  if (r.status == 0) throw BadInput("--url: cannot reach " + base + ": " + r.error);
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
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

}  // namespace

std::string request_body(const std::string& model, bool chat, bool token_ids,
                         const std::vector<std::int32_t>& prompt_ids, int max_tokens,
                         bool ignore_eos, bool stream) {
  nlohmann::ordered_json j;
  if (!model.empty()) j["model"] = model;
  if (chat) {
    j["messages"] = nlohmann::json::array(
        {{{"role", "user"}, {"content", synthetic_text(prompt_ids)}}});
  } else if (token_ids) {
    j["prompt"] = prompt_ids;
  } else {
    j["prompt"] = synthetic_text(prompt_ids);
  }
  j["max_tokens"] = max_tokens;
  j["stream"] = stream;
  if (stream) j["stream_options"] = {{"include_usage", true}};
  if (ignore_eos) j["ignore_eos"] = true;
  return j.dump();
}

int run_load(const LoadOptions& options, const std::string& command_line) {
  LoadPlan plan = make_load_plan(options);
  const LoadOptions& o = plan.opt;
  const bool chat = o.endpoint == "chat";
  auto note = [&](const std::string& line) {
    if (!o.quiet) fmt::print(stderr, "load: {}\n", line);
  };

  // A file workload is read before any server starts, so a bad file costs nothing.
  std::unique_ptr<FileWorkload> file = open_file_workload(plan, note);

  // Ctrl-C from here on interrupts cooperatively (the first level then stops at once), so a
  // server we started is always stopped; it runs in its own process group and does not get
  // the terminal's SIGINT itself.
  const ScopedInterruptHandler interrupts;
  // The server, when we start it: {port} picks the port, and --url follows from it.
  std::unique_ptr<ServerProcess> server;
  std::string url = o.url;
  std::string server_cmd;
  if (!o.server_cmd.empty()) {
    server_cmd = o.server_cmd;
    if (server_cmd.find("{port}") != std::string::npos) {
      const int port = pick_free_port();
      server_cmd = substitute_port(server_cmd, port);
      if (url.empty()) url = "http://127.0.0.1:" + std::to_string(port);
    }
    note("starting the server: " + server_cmd);
    server = std::make_unique<ServerProcess>(server_cmd);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      server->wait_healthy(base_url(url) + "/health", o.server_timeout_s,
                           [] { return ScopedInterruptHandler::signal_received() != 0; });
    } catch (const Error& e) {
      server->stop(5);
      throw BadInput(e.what());
    }
    note(fmt::format("server healthy after {:.2f} s at {}",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                     base_url(url)));
  }
  const std::string base = base_url(url);
  const std::string target = base + endpoint_path(chat);
  const char* key_env = std::getenv("OPENAI_API_KEY");
  const std::string api_key = key_env ? key_env : "";
  const std::string model = o.model.empty() ? first_model(base, o.connect_timeout_s + 30) : o.model;
  const Probe probe = probe_server(target, model, chat, o.ignore_eos,
                                   o.connect_timeout_s + o.first_byte_timeout_s, api_key);
  if (!probe.note.empty()) note(probe.note);
  if (file)
    file->bodies = std::make_unique<SessionBodies>(
        file->workload, BodyOptions{model, chat, probe.token_ids, o.ignore_eos,
                                    o.use_server_responses, std::int64_t(o.think_time_ms)});

  LoadStore store(o.db);
  LoadRunInfo info{command_line, o.label.empty() ? model : o.label, target, o.endpoint, model,
                   server_cmd, probe.token_ids ? "token_ids" : "text", file ? file->lengths : ""};
  const std::int64_t run_id = store.begin_run(plan, info);

  ClientOptions copt;
  copt.url = target;
  copt.chat = chat;
  copt.connect_timeout_s = o.connect_timeout_s;
  copt.first_byte_timeout_s = o.first_byte_timeout_s;
  copt.idle_timeout_s = o.idle_timeout_s;
  copt.api_key = api_key;
  LoadClient client(copt);

  const bool tty = isatty(STDERR_FILENO) == 1;
  std::vector<LevelResult> results;
  bool interrupted = false, any_failed = false;
  std::string server_died;
  const auto sweep_start = std::chrono::steady_clock::now();
  for (const LevelSpec& level : plan.levels) {
    RequestSource source(level, o.input_len_stddev, o.output_len_stddev, o.seed);
    LevelDrive drive;
    drive.duration_s = o.duration_s;
    drive.should_stop = [] { return ScopedInterruptHandler::signal_received() != 0; };
    drive.make_body = [&](int, RequestRecord& rec) {
      const RequestShape shape = source.next();
      rec.input_len = shape.input_len;
      rec.max_tokens = shape.output_len;
      return request_body(model, chat, probe.token_ids, shape.prompt_ids, shape.output_len,
                          o.ignore_eos, true);
    };
    if (file) drive_file_level(*file, level, o, drive);
    const std::string label = fmt::format("[{}/{}] {}", level.index + 1, plan.levels.size(), level.label());
    if (tty && !o.quiet)
      drive.progress = [&](int started, int finished, int failed) {
        fmt::print(stderr, "\r{}: {} started, {} finished, {} failed   ", label, started, finished, failed);
      };
    if (level.mode == LoadMode::kConcurrency) {
      drive.concurrency = level.concurrency;
    } else {
      drive.max_in_flight = o.max_concurrency;
    }
    // Warm-up: the same shape of load, not measured, not stored.
    if (o.warmup_requests > 0) {
      LevelDrive warm = drive;
      warm.max_requests = o.warmup_requests;
      warm.duration_s = 0;
      warm.progress = nullptr;
      if (level.mode == LoadMode::kRate)
        warm.arrival_s = arrival_offsets_s(o.warmup_requests, level.request_rate, level.burstiness,
                                           o.seed + 7919 * std::uint64_t(level.index + 1));
      if (file) drive_file_level(*file, level, o, warm, o.warmup_requests);
      const LevelOutcome w = client.run(warm);
      if (w.interrupted) {
        interrupted = true;
        break;
      }
    }
    if (!file) {
      drive.max_requests = plan.num_requests;
      if (level.mode == LoadMode::kRate)
        drive.arrival_s = arrival_offsets_s(plan.num_requests, level.request_rate,
                                            level.burstiness, o.seed + std::uint64_t(level.index));
    }
    const LevelOutcome outcome = client.run(drive);
    if (tty && !o.quiet) fmt::print(stderr, "\r\033[K");
    if (outcome.interrupted) {
      interrupted = true;
      break;
    }
    if (auto lag = schedule_lag(outcome.requests)) {
      const std::string warning = schedule_lag_warning(*lag);
      if (!warning.empty()) fmt::print(stderr, "load: {}\n", warning);
    }
    LevelResult r;
    r.spec = level;
    r.summary = summarize_level(outcome.requests, plan.goodput);
    const std::int64_t duration_ns = std::int64_t(std::llround(r.summary.duration_s * 1e9));
    r.level_id = store.add_level(run_id, level, o.max_concurrency, outcome.requests, duration_ns,
                                 unix_ns_at(outcome.origin));
    if (r.summary.failed > 0) any_failed = true;
    if (!o.quiet)
      fmt::print(stderr, "{} (elapsed {:.1f} s)\n", label + ": " + level_progress_line(r).substr(level.label().size() + 2),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count());
    results.push_back(std::move(r));
    if (server) {
      if (auto s = server->exited()) {
        server_died = *s;
        break;
      }
    }
  }
  store.finish_run(run_id, interrupted ? "interrupted" : "complete");

  nlohmann::ordered_json run_j;
  run_j["load_run_id"] = run_id;
  run_j["label"] = info.label;
  run_j["url"] = info.url;
  run_j["endpoint"] = info.endpoint;
  run_j["model"] = info.model;
  run_j["prompt_kind"] = info.prompt_kind;
  run_j["mode"] = mode_name(plan.mode);
  run_j["dataset"] = o.dataset_name;
  if (file) run_j["lengths"] = file->lengths;
  run_j["seed"] = o.seed;
  run_j["goodput"] = goodput_text(plan.goodput);
  run_j["command_line"] = command_line;
  print_load_results(std::cout, o.format, results, plan.goodput.any(), run_j);
  std::cout.flush();

  if (server) {
    const std::string how = server_died.empty() ? server->stop(10) : server_died;
    if (!server_died.empty())
      fmt::print(stderr, "load: the server {} during the sweep; {} of {} levels ran\n",
                 server_died, results.size(), plan.levels.size());
    else
      note("server stopped (" + how + ")");
  }
  if (interrupted) {
    const int sig = ScopedInterruptHandler::signal_received();
    fmt::print(stderr, "interrupted: load run {} in {} has {} of {} levels stored\n", run_id, o.db,
               results.size(), plan.levels.size());
    return 128 + (sig ? sig : SIGINT);
  }
  note(fmt::format("stored load run {} ({} level{}) in {}", run_id, results.size(),
                   results.size() == 1 ? "" : "s", o.db));
  if (!server_died.empty()) return 1;
  if (any_failed) {
    int failed = 0, total = 0;
    for (const auto& r : results) failed += r.summary.failed, total += r.summary.requests;
    fmt::print(stderr, "{} of {} requests failed (status 'error' in load_request, with the reason)\n",
               failed, total);
    return 1;
  }
  return 0;
}

}  // namespace llmbench
