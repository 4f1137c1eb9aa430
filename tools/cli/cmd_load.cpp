// `llmbench load`: a serving benchmark against any OpenAI-compatible server (docs/serving.md).
// Flags only; the work is tools/load/load_driver.h's.
#include <CLI/CLI.hpp>

#include <memory>

#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/cli/history_flags.h"
#include "tools/load/load_driver.h"

namespace llmbench {

void add_load_command(CLI::App& root, CommandContext& ctx) {
  auto o = std::make_shared<LoadOptions>();
  CLI::App* cmd = root.add_subcommand(
      "load", "Serving benchmark: streamed requests to an OpenAI-compatible server at set "
              "concurrencies or request rates (docs/serving.md)");
  cmd->footer(
      "Examples:\n  llmbench load --url http://127.0.0.1:8000 --concurrency 1,4,16 --num-requests 64\n"
      "  llmbench load --server-cmd \"llmbench serve --model tiny --port {port}\" --concurrency 1,4 "
      "--input-len 32 --output-len 16 --ignore-eos\n"
      "  llmbench load --url http://127.0.0.1:8000 --request-rate 1,4,inf --burstiness 0.5 "
      "--goodput ttft:500,tpot:50\n"
      "  llmbench load --url http://127.0.0.1:8000 --endpoint chat --dataset-name sharegpt "
      "--dataset-path tests/fixtures/load/sharegpt_small.json --multi-turn --concurrency 2\n"
      "  llmbench load --url http://127.0.0.1:8000 --dataset-name mooncake --dataset-path "
      "tests/fixtures/load/mooncake_small.jsonl --time-scale 0.5\n"
      "  llmbench load --url http://127.0.0.1:8000 --sweep slo --goodput ttft:500,tpot:50 "
      "--server-metrics\n"
      "  llmbench query llmbench.db serving_table");

  const std::string target = "Server";
  cmd->add_option("--url", o->url, "Server base URL, http://HOST:PORT (set by --server-cmd's {port})")
      ->type_name("URL")->group(target);
  cmd->add_option("--model", o->model, "Model name sent with requests (default: the first of "
                  "GET /v1/models)")->type_name("NAME")->group(target);
  cmd->add_option("--endpoint", o->endpoint, "completions|chat: /v1/completions or "
                  "/v1/chat/completions")->type_name("WORD")->capture_default_str()->group(target);
  cmd->add_option("--server-cmd", o->server_cmd,
                  "Start this server first (sh -c), wait for /health, stop it at the end; "
                  "{port} becomes a free port and sets --url")->type_name("CMD")->group(target);
  cmd->add_option("--server-timeout", o->server_timeout_s,
                  "Seconds the started server may take to answer /health")
      ->type_name("S")->capture_default_str()->group(target);
  cmd->add_option("--label", o->label, "Name of this server in the serving table (default: "
                  "the model)")->type_name("NAME")->group(target);

  const std::string levels = "Levels (LIST flags: the sweep covers their cartesian product)";
  CLI::Option* concurrency = cmd->add_option("--concurrency", o->concurrency, "Requests kept in flight, each in [1, 4096] "
                  "(default 1)")->type_name("LIST")->group(levels);
  CLI::Option* rate = cmd->add_option("--request-rate", o->request_rate, "Arrival rates in requests/s, or inf "
                  "(all at once); instead of --concurrency")->type_name("LIST")->group(levels);
  cmd->add_option("--burstiness", o->burstiness, "Gamma shape of the arrival intervals: 1 "
                  "Poisson, < 1 burstier, > 1 more regular (rate levels)")
      ->type_name("LIST")->capture_default_str()->group(levels);
  cmd->add_option("--max-concurrency", o->max_concurrency, "Rate levels: at most this many "
                  "requests in flight (0: no cap)")->type_name("INT")->group(levels);
  cmd->add_flag("--no-stream", o->no_stream, "Ask for one JSON answer per request instead of a "
                "stream: end-to-end latency and usage tokens only (no TTFT, TPOT or ITL)")
      ->group(levels);
  cmd->add_option("--saturation-window", o->saturation_window_s, "Rate levels: seconds over "
                  "which the saturation guard looks for requests in flight and TTFT both rising "
                  "(docs/serving.md, \"Saturation\")")->type_name("S")->capture_default_str()->group(levels);
  cmd->add_flag("--stop-on-saturation", o->stop_on_saturation, "Rate levels: end a level "
                "when the guard finds it over capacity, instead of running its queue to the end")
      ->group(levels);
  cmd->add_option("--input-len", o->input_len, "Prompt tokens (mean)")
      ->type_name("LIST")->capture_default_str()->group(levels);
  cmd->add_option("--input-len-stddev", o->input_len_stddev, "Standard deviation of prompt "
                  "lengths (normal, rounded, >= 1)")->type_name("FLOAT")->capture_default_str()->group(levels);
  cmd->add_option("--output-len", o->output_len, "max_tokens per request (mean)")
      ->type_name("LIST")->capture_default_str()->group(levels);
  cmd->add_option("--output-len-stddev", o->output_len_stddev, "Standard deviation of max_tokens")
      ->type_name("FLOAT")->capture_default_str()->group(levels);
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Ask the server to ignore end-of-sequence "
                "(vLLM's extension), so every request generates max_tokens")->group(levels);

  const std::string workload = "Workload from a file (docs/serving.md, \"Datasets\")";
  cmd->add_option("--dataset-name", o->dataset_name, "random|sharegpt|jsonl|mooncake")
      ->type_name("WORD")->capture_default_str()->group(workload);
  cmd->add_option("--dataset-path", o->dataset_path, "The dataset file (ShareGPT JSON, jsonl, "
                  "or a Mooncake trace)")->type_name("FILE")->group(workload);
  cmd->add_option("--tokenizer", o->tokenizer, "Directory (or file) with tokenizer.json or "
                  "tokenizer.model: counts prompt and output lengths")->type_name("DIR")->group(workload);
  cmd->add_flag("--multi-turn", o->multi_turn, "sharegpt: each conversation is a session whose "
                "turns carry the history so far")->group(workload);
  cmd->add_flag("--use-server-responses", o->use_server_responses, "Sessions: send the "
                "server's own replies as history (default: the dataset's)")->group(workload);
  cmd->add_option("--think-time-ms", o->think_time_ms, "Sessions: wait before each later turn "
                  "(a jsonl line's delay_ms wins)")->type_name("MS")->capture_default_str()->group(workload);
  cmd->add_option("--time-scale", o->time_scale, "mooncake: send each request at timestamp x "
                  "this (0.5: twice as fast)")->type_name("X")->capture_default_str()->group(workload);
  cmd->add_option("--hash-block-size", o->hash_block_size, "mooncake: tokens per hash_ids block")
      ->type_name("INT")->capture_default_str()->group(workload);

  const std::string measure = "Measurement";
  CLI::Option* num_requests = cmd->add_option("--num-requests", o->num_requests, "Measured requests per level (default "
                  "100; with --duration, a cap); with a dataset, sessions (default: all)")->type_name("INT")->group(measure);
  cmd->add_option("--duration", o->duration_s, "Seconds per level after which no request "
                  "starts (in-flight ones finish)")->type_name("S")->group(measure);
  cmd->add_option("--warmup-requests", o->warmup_requests, "Unmeasured requests per level, at "
                  "the level's load")->type_name("INT")->capture_default_str()->group(measure);
  cmd->add_option("--seed", o->seed, "Seed of prompts, lengths and arrivals")
      ->type_name("INT")->capture_default_str()->group(measure);
  cmd->add_option("--goodput", o->goodput, "SLOs for goodput, e.g. ttft:500,tpot:50,e2el:5000 "
                  "(ms)")->type_name("SLOS")->group(measure);
  cmd->add_option("--sweep", o->sweep, "slo: search the highest request rate whose share of "
                  "good requests (--goodput) stays >= --goodput-target (docs/serving.md)")
      ->type_name("WORD")->group(measure);
  cmd->add_option("--goodput-target", o->goodput_target, "--sweep slo: share of requests that "
                  "must meet every --goodput limit")->type_name("F")->capture_default_str()->group(measure);
  cmd->add_option("--sweep-tolerance", o->sweep_tolerance, "--sweep slo: stop when the failing "
                  "and passing rates are within this fraction of each other")
      ->type_name("F")->capture_default_str()->group(measure);
  cmd->add_option("--sweep-max-levels", o->sweep_max_levels, "--sweep slo: at most this many "
                  "levels (the throughput level included)")->type_name("INT")->capture_default_str()->group(measure);
  cmd->add_option("--server-metrics", o->server_metrics, "Scrape the server's Prometheus "
                  "metrics during each level into counter tracks: auto (URL/metrics) or a URL")
      ->type_name("URL|auto")->expected(0, 1)->default_str("auto")->group(measure);
  cmd->add_option("--metrics-interval-ms", o->metrics_interval_ms, "--server-metrics: ms "
                  "between scrapes")->type_name("MS")->capture_default_str()->group(measure);
  cmd->add_option("--metrics-timeout", o->metrics_timeout_s, "--server-metrics: seconds each "
                  "scrape may take (0: the interval, at least 1 s)")->type_name("S")->group(measure);
  cmd->add_option("--connect-timeout", o->connect_timeout_s, "Seconds to connect")
      ->type_name("S")->capture_default_str()->group(measure);
  cmd->add_option("--first-byte-timeout", o->first_byte_timeout_s,
                  "Seconds from send to the first response byte")
      ->type_name("S")->capture_default_str()->group(measure);
  cmd->add_option("--idle-timeout", o->idle_timeout_s, "Seconds a stream may go without data")
      ->type_name("S")->capture_default_str()->group(measure);
  cmd->add_option("--request-timeout", o->request_timeout_s, "Seconds a whole request may take "
                  "(0: 300 + 1 per max_tokens); a stream that never ends fails at it")
      ->type_name("S")->capture_default_str()->group(measure);

  const std::string output = "Output";
  cmd->add_option("--db", o->db, "SQLite database results are appended to")
      ->type_name("PATH")->capture_default_str()->group(output);
  cmd->add_option("--format", o->format, "table|wide|md|csv|json|jsonl|vllm-json (table fits "
                  "120 columns, wide: every table column; vllm-json: vLLM's --save-result keys, "
                  "one level a line)")
      ->type_name("WORD")->capture_default_str()->group(output);
  cmd->add_flag("--quiet", o->quiet, "No progress or notices on stderr")->group(output);
  auto history = std::make_shared<HistoryFlags>();
  add_history_flags(cmd, *history);
  cmd->callback([o, history, &ctx, concurrency, rate, num_requests] {
    // Given but empty (or 0) is not the same as not given: the defaults would run instead.
    if (concurrency->count() && o->concurrency.empty())
      throw BadInput("--concurrency: expected a comma-separated list of integers in [1, 4096], "
                     "got ''");
    if (rate->count() && o->request_rate.empty())
      throw BadInput("--request-rate: expected a comma-separated list of rates > 0 or inf, got ''");
    if (num_requests->count() && o->num_requests < 1)
      throw BadInput("--num-requests: expected an integer in [1, 10000000], got " +
                     std::to_string(o->num_requests));
    ctx.exit_code = run_load(*o, ctx.command_line);
    append_latest_run(*history, o->db, /*serving=*/true);
  });
}

}  // namespace llmbench
