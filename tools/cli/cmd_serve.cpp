// `llmbench serve`: loads a model (a preset with random weights, or a checkpoint directory) and
// serves it over HTTP with continuous batching (tools/serve/server.h) until SIGINT/SIGTERM.
// Prints `serve: listening on http://HOST:PORT` on stderr once the socket is bound (port 0
// binds an ephemeral port; scripts read the line).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <chrono>
#include <exception>
#include <optional>
#include <thread>

#include <unistd.h>

#include "engine/bench/nvml.h"
#include "engine/model/backend_factory.h"
#include "engine/checkpoint/hf_checkpoint.h"
#include "engine/serving/scheduler.h"
#include "kernels/common/error.h"
#include "kernels/cpu/decode_dispatch.h"
#include "tools/console/build_warning.h"
#include "tools/cli/commands.h"
#include "tools/run/dispatch_cache.h"
#include "tools/run/run_plan.h"
#include "tools/console/signals.h"
#include "tools/serve/serve_energy.h"
#include "tools/serve/serve_memory.h"
#include "tools/serve/serve_store.h"
#include "tools/serve/server.h"

namespace llmbench {

namespace {

struct ServeArgs {
  std::string model = "small";
  std::string dtype = "fp32";
  std::string backend = "auto";
  int threads = 0;
  std::uint64_t seed = 0;
  double shutdown_timeout_s = 5.0;
  ServeOptions serve;
  SchedulerOptions sched;
  bool no_chunked_prefill = false;
  std::string trace = "off";  // --trace off|steps|ops (needs --db)
  std::string db;  // --db: the serving tables, stored as the server runs
  std::string chat_template;  // --chat-template NAME ("": the checkpoint's or the preset's)
  std::string kv_cache_dtype = "fp32";  // --kv-cache-dtype fp32|fp16: the KV pool's elements
};

// Runs `f` (the CPU weight load, which fills and converts with OpenMP) on a thread that ends
// when it returns, and gives back its result or rethrows its exception. libgomp keeps a pool of
// worker threads for every thread that opened a parallel region, for the thread's lifetime, and
// once it manages more threads than there are CPUs it lets idle workers spin only ~100 times
// before sleeping. A load on the main thread left its pool behind, the engine thread's pool came
// on top, and every op of every step paid a futex wake-up (measured: a 1-row decode step of
// `small` bf16 took 7.1 ms in the server against 4.8 ms in `llmbench run`). The loading
// thread's pool goes when the thread ends, so the engine thread's pool is the only one.
template <class F>
auto on_passing_thread(F f, int omp_threads) -> decltype(f()) {
  std::optional<decltype(f())> result;
  std::exception_ptr error;
  std::thread t([&] {
    try {
      omp_set_num_threads(omp_threads);
      result.emplace(f());
    } catch (...) {
      error = std::current_exception();
    }
  });
  t.join();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

bool loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

template <class T>
void require_range(const char* flag, T value, T lo, T hi) {
  if (!(value >= lo && value <= hi))  // also false for NaN
    throw BadInput(fmt::format("{}: expected a value in [{}, {}]; got {}", flag, lo, hi, value));
}

// Every flag checked before anything is loaded (exit 2 with one line naming the flag).
void check_flags(const ServeArgs& a) {
  if (!loopback(a.serve.host))
    throw BadInput("--host: llmbench serve listens on loopback addresses only (127.0.0.1, ::1); "
                   "got '" + a.serve.host + "'");
  require_range("--port", a.serve.port, 0, 65535);
  require_range("--threads", a.threads, 0, 4096);  // `run`'s cap
  require_range("--shutdown-timeout", a.shutdown_timeout_s, 0.0, 3600.0);
  require_range("--max-waiting", a.serve.max_waiting, 1, 1 << 20);
  require_range("--http-threads", a.serve.http_threads, 1, 1024);
  require_range("--max-connections", a.serve.max_connections, 1, 65536);
  require_range("--max-num-seqs", a.sched.max_num_seqs, 1, 1 << 16);
  require_range("--max-num-batched-tokens", a.sched.max_num_batched_tokens, 1, 1 << 20);
  require_range("--kv-block-size", a.sched.block_size, 1, 4096);
  require_range("--kv-cache-tokens", a.sched.kv_cache_tokens, 0, 1 << 30);
  const auto trace = parse_trace_level(a.trace);
  if (!trace) throw BadInput("--trace: expected off, steps or ops; got '" + a.trace + "'");
  if (*trace != TraceLevel::kOff && a.db.empty())
    throw BadInput("--trace " + a.trace + ": needs --db PATH (the trace is stored there)");
  require_range("--max-model-len", a.sched.max_len, 0, 1 << 24);
  if (!a.chat_template.empty() && !chat_template_by_name(a.chat_template))
    throw BadInput("--chat-template: expected one of " + chat_template_names() + "; got '" +
                   a.chat_template + "'");
}

// --chat-template, else the checkpoint's own (refused when unknown), else the preset's default.
std::optional<ChatTemplate> choose_chat_template(const ServeArgs& a, bool preset) {
  if (!a.chat_template.empty()) return chat_template_by_name(a.chat_template);
  if (preset) return preset_chat_template(a.model);
  return checkpoint_chat_template(a.model);
}

int run_serve(ServeArgs a, const std::string& command_line) {
  check_flags(a);
  const auto dtype = parse_dtype(a.dtype);
  if (!dtype)
    throw BadInput("--dtype: expected fp32, fp16, bf16, int8 or int4; got '" + a.dtype + "'");
  a.serve.trace = *parse_trace_level(a.trace);
  a.sched.chunked_prefill = !a.no_chunked_prefill;
  const auto kv_dtype = parse_kv_dtype(a.kv_cache_dtype);
  if (!kv_dtype)
    throw BadInput("--kv-cache-dtype: expected fp32 or fp16; got '" + a.kv_cache_dtype + "'");
  a.sched.kv_dtype = *kv_dtype;
  warn_if_debug_build();
  // --db is opened (and a bad path or a file that is not an llmbench database refused) before
  // the model loads.
  std::optional<ServeStore> store;
  if (!a.db.empty()) store.emplace(a.db);
  const ModelConfig c = resolve_model(a.model);
  if (a.sched.max_len > c.max_seq_len)
    throw BadInput(fmt::format("--max-model-len: {} exceeds the context length of '{}' ({})",
                               a.sched.max_len, c.name, c.max_seq_len));
  check_serve_fits(estimate_serve_memory(c, *dtype, a.sched), available_host_memory());
  const BackendChoice choice = choose_backend(a.backend);
  if (!choice.notice.empty()) fmt::print(stderr, "{}\n", choice.notice);
  std::unique_ptr<Backend> backend = make_backend(choice.name, a.threads, false);
  a.serve.omp_threads = choice.name == "cpu" ? omp_get_max_threads() : 0;
  const bool preset = find_preset(a.model) != nullptr;
  a.serve.chat_template = choose_chat_template(a, preset);
  // The decode op classes' CPU paths, as `run` takes them (tools/run/dispatch_cache.h): the
  // table cached for this CPU, thread count and model shape, else measured now and cached
  // (docs/metrics.md gives how long: 0.6 s for tiny, 8-10 s for tinyllama-1.1b on a busy 2-vCPU
  // VM); on the passing thread, like the load below.
  // The line is printed once the server is up, so a start-up refusal stays one line.
  std::string cpu_isa, dispatch_line;
  if (a.serve.omp_threads > 0) {
    dispatch_line = on_passing_thread(
        [&] { return install_cpu_dispatch(c, a.serve.omp_threads, /*may_measure=*/true); },
        a.serve.omp_threads);
    cpu_isa = cpu::cpu_dispatch_description();
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto load = [&] {
    return preset ? load_weights(c, RandomWeights(a.seed), *backend, *dtype)
                  : load_weights(c, CheckpointWeights(a.model, c), *backend, *dtype);
  };
  Model model(c, a.serve.omp_threads > 0 ? on_passing_thread(load, a.serve.omp_threads) : load(),
              *backend);
  if (a.serve.model_name.empty()) a.serve.model_name = a.model;
  a.serve.model_root = a.model;

  // A checkpoint directory's tokenizer.json (preferred, as load's --tokenizer) or
  // tokenizer.model tokenizes text prompts (tools/text/tokenizer.h); neither: the byte mapping.
  if (!preset) a.serve.tokenizer_file = Tokenizer::file_in(a.model);
  // Energy per output token (docs/metrics.md, "Energy per phase"): on CUDA, NVML for the device
  // in use; its counter's update and the idle power are measured now, with nothing running.
  std::unique_ptr<Nvml> nvml;
  std::optional<EnergyMeter> meter;
  ServeEnergy energy;
  if (choice.name == "cuda") {
    nvml = std::make_unique<Nvml>(current_cuda_pci_bus_id());
    if (nvml->available()) {
      meter.emplace(nvml->meter());
      energy.metered = true;
      energy.calibration = meter->calibrate(kEnergyCalibrationTimeout);
      energy.power_limit_w = meter->power_limit_w();
      a.serve.energy = &*meter;
    } else {
      energy.note = nvml->note();
    }
  }
  Server server(model, a.sched, a.serve);
  const int port = server.bind();
  // Signals are caught from here on, before the lines that say the server is up: a script
  // that sends SIGTERM as soon as it reads "listening" gets a clean stop (exit 0), not 143.
  ScopedInterruptHandler signals;
  const EngineCounters k = server.engine().counters();
  fmt::print(stderr,
             "serve: {} {} on {} ({}), loaded in {:.2f} s; KV pool {} blocks of {} "
             "({:.1f} MiB, {}); max-num-seqs {}, max-num-batched-tokens {}, chunked prefill {}, prefix caching {}\n",
             c.name, dtype_name(*dtype), choice.name, backend->device_description(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
             k.kv_blocks_total, server.engine().options().block_size,
             double(k.kv_pool_bytes) / (1 << 20), kv_dtype_name(a.sched.kv_dtype),
             a.sched.max_num_seqs,
             a.sched.max_num_batched_tokens, a.sched.chunked_prefill ? "on" : "off",
             a.sched.prefix_caching ? "on" : "off");
  if (!dispatch_line.empty()) fmt::print(stderr, "serve: {}\n", dispatch_line);
  std::int64_t session_id = 0;
  if (store) {
    ServeSessionInfo info;
    info.command_line = command_line;
    info.model = a.serve.model_name;
    info.dtype = std::string(dtype_name(*dtype));
    info.backend = choice.name;
    info.device = backend->device_description();
    const auto since_origin = std::chrono::steady_clock::now() - server.origin();
    info.started_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               (std::chrono::system_clock::now() - since_origin).time_since_epoch())
                               .count();
    info.trace = a.serve.trace;
    info.pid = std::int64_t(::getpid());
    info.cpu_isa = cpu_isa;
    info.scheduler = server.engine().options();
    info.kv_blocks = k.kv_blocks_total;
    const std::int64_t id = store->begin_session(info);
    session_id = id;
    server.engine().set_log(&*store);
    fmt::print(stderr, "serve: storing session {} in {} as it runs{}\n", id, a.db,
               a.serve.trace == TraceLevel::kOff
                   ? std::string()
                   : " (trace " + a.trace + ": engine steps" +
                         (a.serve.trace == TraceLevel::kOps ? " and their ops)" : ")"));
  }
  fmt::print(stderr, "serve: listening on http://{}:{}\n", a.serve.host, port);
  const auto& eos = server.engine().options().eos_token_ids;
  fmt::print(stderr, "serve: text prompts: {}; chat template: {}; end of sequence: {}\n",
             server.tokenizer().name(),
             a.serve.chat_template ? a.serve.chat_template->name : "none (chat requests get 400)",
             eos.empty() ? std::string("none (generation stops at length)")
                         : fmt::format("{}", fmt::join(eos, " ")));
  std::fflush(stderr);

  std::thread http([&] { server.serve(); });
  while (!ScopedInterruptHandler::signal_received())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  fmt::print(stderr, "serve: signal {}: stopping (in-flight requests get {:.1f} s)\n",
             ScopedInterruptHandler::signal_received(), a.shutdown_timeout_s);
  server.shutdown(std::chrono::milliseconds(std::int64_t(a.shutdown_timeout_s * 1000)));
  http.join();
  const EngineCounters end = server.engine().counters();
  fmt::print(stderr, "serve: stopped after {} steps, {} tokens generated\n", end.steps_total,
             end.generation_tokens_total);
  if (store) {
    server.engine().set_log(nullptr);
    store->close();
    const ServeStore::Totals t = store->totals();
    fmt::print(stderr, "serve: stored {} steps, {} requests{} in {}{}\n", t.steps, t.requests,
               a.serve.trace == TraceLevel::kOff ? std::string()
                                                 : fmt::format(" and {} trace events", t.events),
               a.db, t.dropped ? fmt::format(" ({} rows dropped while it could not store)", t.dropped) : "");
  }
  if (choice.name == "cuda") {
    if (const auto spans = server.engine().energy()) energy.spans = *spans;
    fmt::print(stderr, "{}\n", serve_energy_line(energy));
    if (store) store_serve_energy(a.db, session_id, energy);
  }
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& root, CommandContext& ctx) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* cmd = root.add_subcommand(
      "serve", "OpenAI-compatible HTTP server with continuous batching (docs/serving.md)");
  cmd->footer("Examples:\n  llmbench serve --model small --port 8000\n  llmbench serve --model tiny --port 0 --max-num-seqs 16 --db serve.db\n  curl -s http://127.0.0.1:8000/v1/completions -d '{\"model\":\"small\",\"prompt\":\"hello\",\"max_tokens\":16}'");
  cmd->add_option("--model", a->model, "Preset name or Hugging Face checkpoint directory")
      ->capture_default_str();
  cmd->add_option("--dtype", a->dtype, "Weight dtype: fp32|fp16|bf16|int8|int4")
      ->capture_default_str();
  cmd->add_option("--backend", a->backend, "auto|cpu|cuda")->capture_default_str();
  cmd->add_option("--threads", a->threads, "CPU threads (0: the runtime's default)");
  cmd->add_option("--seed", a->seed, "Seed of random weights")->capture_default_str();
  cmd->add_option("--host", a->serve.host, "Loopback address to listen on")->capture_default_str();
  cmd->add_option("--port", a->serve.port, "Port (0: an ephemeral one)")->capture_default_str();
  cmd->add_option("--served-model-name", a->serve.model_name,
                  "Model name in /v1/models and requests (default: --model)");
  cmd->add_option("--max-num-seqs", a->sched.max_num_seqs, "Sequences running at once")
      ->capture_default_str();
  cmd->add_option("--max-num-batched-tokens", a->sched.max_num_batched_tokens,
                  "Rows (tokens) per engine step")
      ->capture_default_str();
  a->sched.prefix_caching = true;  // as vLLM V1: see docs/serving.md, "Prefix caching"
  cmd->add_flag("--enable-prefix-caching,!--no-prefix-caching", a->sched.prefix_caching,
                "Reuse cached KV blocks of shared prompt prefixes (default: on)");
  cmd->add_flag("--no-chunked-prefill", a->no_chunked_prefill,
                "Run each prompt whole in one step (prompts over the token budget are refused)");
  cmd->add_option("--kv-block-size", a->sched.block_size, "Positions per KV block")
      ->capture_default_str();
  cmd->add_option("--kv-cache-tokens", a->sched.kv_cache_tokens,
                  "KV pool size in positions (0: max-num-seqs x 256, at least one context)");
  cmd->add_option("--kv-cache-dtype", a->kv_cache_dtype,
                  "fp32|fp16: the KV pool's elements; fp16 rounds keys and values to halves "
                  "(half the pool's bytes per position)")
      ->capture_default_str();
  cmd->add_option("--max-model-len", a->sched.max_len,
                  "Longest prompt + max_tokens (0: the model's context length)");
  cmd->add_option("--max-waiting", a->serve.max_waiting,
                  "Queued requests beyond this are refused with 429")
      ->capture_default_str();
  cmd->add_option("--http-threads", a->serve.http_threads,
                  "HTTP worker threads: completions answered at once (1..1024)")
      ->capture_default_str();
  cmd->add_option("--max-connections", a->serve.max_connections,
                  "Open connections; one more is answered 503 (1..65536)")
      ->capture_default_str();
  cmd->add_option("--chat-template", a->chat_template,
                  "Chat template: " + chat_template_names() +
                      " (default: the checkpoint's tokenizer_config.json, or the preset's)");
  cmd->add_option("--shutdown-timeout", a->shutdown_timeout_s,
                  "Seconds in-flight requests get after SIGINT/SIGTERM before they are aborted")
      ->capture_default_str();
  cmd->add_option("--trace", a->trace,
                  "off|steps|ops: store each engine step (steps) and the ops inside it (ops), "
                  "with the requests in each step, in --db (docs/serving.md, \"Tracing a server\")")
      ->capture_default_str();
  cmd->add_option("--db", a->db,
                  "SQLite database for the serving tables (steps, requests), stored as the server runs "
                  "(committed at least every 0.5 s)");
  cmd->callback([a, &ctx] { ctx.exit_code = run_serve(*a, ctx.command_line); });
}

}  // namespace llmbench
