// The workloads `llmbench load` reads from files (--dataset-name sharegpt|jsonl|mooncake with
// --dataset-path; docs/serving.md "Datasets" describes each format): every one becomes a list
// of sessions, each a list of turns. A single-turn request is a session of one turn; a ShareGPT
// conversation with --multi-turn, or the jsonl lines sharing a session_id, is a session of
// several turns sent one after another. Lengths are counted with --tokenizer when one is given
// (tools/text/tokenizer.h, the tokenizer serve uses); without one a turn's prompt length is
// unknown (the server's usage says) and its output length is --output-len.
// Not here: how turns become request bodies (session_bodies.h), when they are sent (the
// client), synthetic random workloads (load_plan.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace llmbench {

class Tokenizer;

struct ChatMessage {
  std::string role;     // user | assistant | system
  std::string content;
};

// One request: a single-turn request, or one turn of a session.
struct WorkloadTurn {
  std::string text;                    // the prompt / user message ("" for a token-id prompt)
  std::vector<std::int32_t> prompt_ids;  // a token-id prompt (jsonl ids, trace blocks)
  std::vector<ChatMessage> messages;   // jsonl `messages`: what this turn adds (chat form)
  std::string reference_reply;         // the dataset's answer ("" when the file has none)
  int prompt_tokens = -1;              // this turn's own prompt, counted (-1: unknown)
  int output_len = 0;                  // max_tokens
  std::int64_t think_ms = -1;          // wait before this turn (-1: --think-time-ms)
};

struct WorkloadSession {
  std::vector<WorkloadTurn> turns;
  double timestamp_ms = -1;            // trace replay: when it is due (-1: not a trace)
};

struct Workload {
  std::string name;                    // random | sharegpt | jsonl | mooncake
  std::vector<WorkloadSession> sessions;
  bool multi_turn = false;             // some session has more than one turn
  bool counted = false;                // prompt/output lengths came from a tokenizer
  std::vector<std::string> notes;      // what was filtered, sampled or assumed (printed once)
};

struct DatasetOptions {
  std::string name, path;
  int num_requests = 0;                // sessions to keep; 0: every one in the file
  std::uint64_t seed = 0;
  bool multi_turn = false;             // sharegpt: a conversation is one session
  int default_output_len = 128;        // max_tokens when the file and the tokenizer do not say
  int hash_block_size = 512;           // mooncake: tokens per hash_ids block
  const Tokenizer* tokenizer = nullptr;
};

// vLLM's ShareGPT filters (vllm/benchmarks/datasets.py, is_valid_sequence), applied to
// single-turn requests when the lengths are counted: a prompt or an output under 4 tokens is
// too short; a prompt over 1024 tokens, or prompt + output over 2048, is too long.
struct LengthFilter {
  int min_len = 4, max_prompt_len = 1024, max_total_len = 2048;
  // "" when kept, else "too short" / "too long".
  std::string reject(int prompt_len, int output_len) const;
};

// Each reader checks its file: BadInput "--dataset-path FILE[:LINE]: what is wrong".
Workload read_sharegpt(const DatasetOptions& o);
Workload read_jsonl(const DatasetOptions& o);
Workload read_mooncake(const DatasetOptions& o);
// By o.name (sharegpt | jsonl | mooncake).
Workload read_dataset(const DatasetOptions& o);

// A seeded shuffle of 0 .. n-1 (Fisher-Yates over a 64-bit Mersenne twister, written out so
// the order is the same on every platform and standard library).
std::vector<std::size_t> seeded_order(std::size_t n, std::uint64_t seed);

// The whole file as text; BadInput naming the flag when it cannot be read.
std::string read_dataset_file(const std::string& path);

}  // namespace llmbench
