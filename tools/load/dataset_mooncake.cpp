// The Mooncake / AIPerf trace reader (see dataset.h and trace_prompt.h): one request a line,
// {"timestamp": MS, "input_length": TOKENS, "output_length": TOKENS, "hash_ids": [INT, ...]}
// (extra keys ignored). Each line becomes a single-turn session due at its timestamp; its prompt
// is built from its hash_ids blocks so requests that share a hash_ids prefix share exactly that
// many leading blocks of tokens. Lines are sorted by timestamp (stable), and --num-requests keeps
// the first N.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "kernels/common/error.h"
#include "engine/checkpoint/json_input.h"
#include "tools/load/dataset.h"
#include "tools/load/trace_prompt.h"

namespace llmbench {

namespace {

using json = nlohmann::json;

struct TraceLine {
  double timestamp_ms = 0;
  int input_length = 0, output_length = 0;
  std::vector<std::int64_t> hash_ids;
  int line = 0;
};

TraceLine parse_trace_line(const std::string& text, int n, const std::string& path) {
  const auto fail = [&](const std::string& what) {
    throw BadInput(fmt::format("--dataset-path {}:{}: {}", path, n, what));
  };
  auto parsed = parse_json(text);
  if (!parsed.ok()) fail("not valid JSON (" + parsed.error + ")");
  const json j = std::move(parsed.value);
  if (!j.is_object()) fail("not a JSON object");
  TraceLine t;
  t.line = n;
  // Up to 1e13 ms: relative times from 0, or Unix-epoch ms (1.7e12 today). 1e300 was taken
  // and made every send time overflow to "at once".
  if (!j.contains("timestamp") || !j["timestamp"].is_number() ||
      !(j["timestamp"].get<double>() >= 0 && j["timestamp"].get<double>() <= 1e13))
    fail("\"timestamp\" must be a number of ms in [0, 1e13]");
  t.timestamp_ms = j["timestamp"].get<double>();
  for (const char* key : {"input_length", "output_length"}) {
    if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<long long>() < 1 ||
        j[key].get<long long>() > (1 << 20))
      fail(std::string("\"") + key + "\" must be an integer in [1, 1048576]");
  }
  t.input_length = j["input_length"].get<int>();
  t.output_length = j["output_length"].get<int>();
  if (j.contains("hash_ids")) {
    if (!j["hash_ids"].is_array()) fail("\"hash_ids\" must be a list of integers");
    for (const json& h : j["hash_ids"]) {
      if (!h.is_number_integer()) fail("\"hash_ids\" must be a list of integers");
      t.hash_ids.push_back(h.get<std::int64_t>());
    }
  }
  return t;
}

}  // namespace

Workload read_mooncake(const DatasetOptions& o) {
  if (o.hash_block_size < 1 || o.hash_block_size > 1 << 20)
    throw BadInput("--hash-block-size: expected an integer in [1, 1048576]");
  std::istringstream in(read_dataset_file(o.path));
  std::vector<TraceLine> lines;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(parse_trace_line(text, n, o.path));
  }
  if (lines.empty()) throw BadInput("--dataset-path " + o.path + ": no requests (empty trace)");
  std::stable_sort(lines.begin(), lines.end(),
                   [](const TraceLine& a, const TraceLine& b) { return a.timestamp_ms < b.timestamp_ms; });
  if (o.num_requests > 0 && std::size_t(o.num_requests) < lines.size())
    lines.resize(std::size_t(o.num_requests));
  const double span_ms = lines.back().timestamp_ms - lines.front().timestamp_ms;
  if (span_ms > 1e9)
    throw BadInput(fmt::format("--dataset-path {}: the trace spans {:g} ms from its first request "
                               "to its last, more than 1e9 ms (11.6 days)", o.path, span_ms));
  Workload w;
  w.name = "mooncake";
  w.counted = true;  // the trace states its lengths in tokens
  int beyond = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const TraceLine& l = lines[i];
    // n hash_ids at b tokens a block need more than (n - 1) x b tokens: fewer means the trace
    // was written at a smaller block size, and its blocks would collapse into the first ones
    // (AIPerf refuses such rows too). Name the line and the block size that would fit.
    const auto n_ids = std::int64_t(l.hash_ids.size());
    if (n_ids > 1 && (n_ids - 1) * o.hash_block_size >= l.input_length)
      throw BadInput(fmt::format(
          "--dataset-path {}:{}: {} hash_ids at --hash-block-size {} need more than {} tokens, but "
          "\"input_length\" is {}; the trace's block size is at most {} (--hash-block-size)",
          o.path, l.line, n_ids, o.hash_block_size, (n_ids - 1) * o.hash_block_size,
          l.input_length, (l.input_length - 1) / (n_ids - 1)));
    WorkloadTurn t;
    t.prompt_ids = trace_prompt_ids(l.hash_ids, l.input_length, o.hash_block_size, i, o.seed);
    t.prompt_tokens = l.input_length;
    t.output_len = l.output_length;
    if (std::int64_t(l.hash_ids.size()) * o.hash_block_size < l.input_length) ++beyond;
    WorkloadSession s;
    s.turns.push_back(std::move(t));
    s.timestamp_ms = l.timestamp_ms - lines.front().timestamp_ms;
    w.sessions.push_back(std::move(s));
  }
  if (beyond > 0)
    w.notes.push_back(fmt::format("mooncake: {} request{} longer than their hash_ids blocks; the "
                                  "rest of each prompt is tokens of its own", beyond,
                                  beyond == 1 ? " is" : "s are"));
  return w;
}

}  // namespace llmbench
