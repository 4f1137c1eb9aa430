// Deterministic fuzz-style tests of every parser that reads what a peer or a file sends (issue
// 42): the HTTP request head, chunked bodies, server-sent events and the stream parse, the
// Prometheus text format, each dataset format (ShareGPT JSON, jsonl, Mooncake traces),
// tokenizer.json, and the bounded JSON parse under them all. Valid seeds are mutated at random
// (bytes flipped, cut, repeated, nested, spliced with hostile pieces) and fed in random splits;
// each outcome must be a value or llmbench::Error (or, for the incremental parsers, a refusal
// state): never a crash, a hang or another exception. Each parser is one ctest entry, bounded
// by an iteration count and about 2 s of wall time.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/checkpoint/json_input.h"
#include "tests/fuzz/fuzz_rng.h"
#include "tools/load/dataset.h"
#include "tools/load/prometheus_text.h"
#include "tools/load/stream_parse.h"
#include "tools/text/tokenizer_bpe.h"
#include "tools/serve/http_request.h"

namespace {

using namespace llmbench_test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kIterations = 1500;
constexpr auto kWallLimit = std::chrono::seconds(2);

const std::vector<std::string> kHostile = {
    std::string(300, '['), std::string(300, '{'), "\"", "\\", "\r\n", "\n\n", "\r", "\0",
    ":", "data:", "data: [DONE]", "0\r\n\r\n", "ffffffffffffffff\r\n", "-1", "1e309",
    "18446744073709551616", "NaN", "null", "{}", "[]", "\"a\":", ",,,", "\xff\xfe",
    "Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n", std::string(5000, 'a'),
    "# TYPE m counter\n", "m{a=\"\\\"\"} 1\n", "m{", "} 1e400\n"};

// One mutation of `seed`: flips, cuts, repeats, inserts a hostile piece or nests it.
std::string mutate(FuzzRng& rng, const std::string& seed) {
  std::string s = seed;
  const int steps = 1 + int(rng.below(4));
  for (int k = 0; k < steps; ++k) {
    const std::size_t at = s.empty() ? 0 : std::size_t(rng.below(s.size() + 1));
    switch (rng.below(6)) {
      case 0:
        if (!s.empty()) s[std::min(at, s.size() - 1)] ^= char(1u << rng.below(8));
        break;
      case 1:
        s.resize(at);
        break;
      case 2:
        s.insert(at, rng.pick(kHostile));
        break;
      case 3:
        if (at < s.size()) s.insert(at, s.substr(at, std::size_t(rng.below(64))));
        break;
      case 4: {
        const int depth = int(rng.below(200));
        s.insert(at, std::string(std::size_t(depth), '[') + std::string(std::size_t(depth), ']'));
        break;
      }
      default:
        if (!s.empty()) s.erase(at, std::size_t(rng.below(16)));
    }
  }
  return s;
}

// Runs `one(iteration, rng)` up to kIterations times or kWallLimit; every outcome must be
// success or llmbench::Error.
template <class Fn>
void fuzz(const char* stream, Fn one) {
  FuzzRng rng(0x42, stream);
  const auto t0 = Clock::now();
  int done = 0, failed = 0;
  for (int i = 0; i < kIterations && Clock::now() - t0 < kWallLimit; ++i, ++done) {
    bool ok = false;
    const std::string problem = fuzz_outcome([&] { one(i, rng); }, ok);
    ASSERT_TRUE(problem.empty()) << stream << " iteration " << i << ": " << problem;
    failed += ok ? 0 : 1;
  }
  std::printf("%s: %d inputs, %d refused cleanly\n", stream, done, failed);
  EXPECT_GT(done, 0);
}

// Feeds `bytes` to a RequestReader in random splits until it completes, refuses or runs out.
void feed_http(FuzzRng& rng, const std::string& bytes) {
  llmbench::RequestReader r(1 << 16);
  std::size_t at = 0;
  int rounds = 0;
  while (at < bytes.size() && rounds++ < 10000) {
    const std::size_t n = std::min(bytes.size() - at, std::size_t(1 + rng.below(64)));
    auto s = r.feed(bytes.data() + at, n);
    at += n;
    while (s == llmbench::RequestReader::State::kHeadDone || s == llmbench::RequestReader::State::kComplete) {
      if (s == llmbench::RequestReader::State::kComplete) r.take();
      s = r.feed();
      if (s == llmbench::RequestReader::State::kNeedMore) break;
    }
    if (s == llmbench::RequestReader::State::kError) {
      ASSERT_GE(r.error_status(), 400);
      ASSERT_LT(r.error_message().size(), 400u);
      return;
    }
  }
}

TEST(FuzzParsers, HttpHead) {
  const std::vector<std::string> seeds = {
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
      "POST /v1/completions HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
      "\r\n\r\nGET /metrics HTTP/1.0\r\nExpect: 100-continue\r\n\r\nGET / HTTP/1.1\r\n\r\n"};
  fuzz("http head", [&](int, FuzzRng& rng) { feed_http(rng, mutate(rng, rng.pick(seeds))); });
}

TEST(FuzzParsers, ChunkedBody) {
  const std::vector<std::string> seeds = {
      "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n"};
  fuzz("chunked body", [&](int, FuzzRng& rng) { feed_http(rng, mutate(rng, rng.pick(seeds))); });
}

TEST(FuzzParsers, ServerSentEvents) {
  const std::vector<std::string> seeds = {
      "data: {\"choices\": [{\"index\": 0, \"text\": \"x\", \"token_ids\": [1]}]}\n\n"
      ": keep-alive\n\ndata: {\"choices\": [], \"usage\": {\"prompt_tokens\": 4, "
      "\"completion_tokens\": 1}}\n\ndata: [DONE]\n\n",
      "data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}, \"finish_reason\": \"stop\"}]}\r\n\r\n",
      "data: {\"error\": {\"message\": \"boom\"}}\n\n"};
  fuzz("sse", [&](int, FuzzRng& rng) {
    const std::string bytes = mutate(rng, rng.pick(seeds));
    llmbench::SseSplitter split;
    split.set_max_line_bytes(4096);
    std::vector<llmbench::SseEvent> events;
    for (std::size_t at = 0; at < bytes.size();) {
      const std::size_t n = std::min(bytes.size() - at, std::size_t(1 + rng.below(32)));
      split.feed(bytes.data() + at, n, std::int64_t(at), events);
      at += n;
    }
    const auto parsed = llmbench::parse_stream(events, rng.percent(50), true);
    ASSERT_LT(parsed.error.size(), 600u);
  });
}

TEST(FuzzParsers, PrometheusText) {
  const std::vector<std::string> seeds = {
      "# HELP llmbench_requests_running Requests.\n# TYPE llmbench_requests_running gauge\n"
      "llmbench_requests_running 3\n",
      "# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.3\n"
      "h_count 2\nm{a=\"x\",b=\"y\\n\"} 1.5e3 1700000000000\n"};
  fuzz("prometheus", [&](int, FuzzRng& rng) {
    const auto t = llmbench::parse_prometheus_text(mutate(rng, rng.pick(seeds)));
    ASSERT_LE(t.samples.size(), 100000u);
  });
}

// Writes `text` to a scratch file and reads it as dataset `name`.
void read_dataset_text(const std::string& name, const std::string& text) {
  fs::create_directories(LLMBENCH_TEST_SCRATCH);
  const std::string path = std::string(LLMBENCH_TEST_SCRATCH) + "/fuzz_dataset_" + name;
  std::ofstream(path, std::ios::binary) << text;
  llmbench::DatasetOptions o;
  o.name = name;
  o.path = path;
  o.num_requests = 0;
  if (name == "sharegpt") llmbench::read_sharegpt(o);
  else if (name == "jsonl") llmbench::read_jsonl(o);
  else llmbench::read_mooncake(o);
}

TEST(FuzzParsers, ShareGptDataset) {
  const std::string seed =
      R"([{"id": "a", "conversations": [{"from": "human", "value": "hello there friend"},)"
      R"( {"from": "gpt", "value": "hi back to you"}]}, {"id": "b", "conversations": []}])";
  fuzz("sharegpt", [&](int, FuzzRng& rng) { read_dataset_text("sharegpt", mutate(rng, seed)); });
}

TEST(FuzzParsers, JsonlDataset) {
  const std::string seed =
      "{\"prompt\": \"hello\", \"output_len\": 4}\n{\"prompt\": \"again\", \"session_id\": 1, "
      "\"delay_ms\": 5}\n{\"prompt_ids\": [1, 2, 3]}\n";
  fuzz("jsonl", [&](int, FuzzRng& rng) { read_dataset_text("jsonl", mutate(rng, seed)); });
}

TEST(FuzzParsers, MooncakeTrace) {
  const std::string seed =
      "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 4, \"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 27, \"input_length\": 600, \"output_length\": 2, \"hash_ids\": [1]}\n";
  fuzz("mooncake", [&](int, FuzzRng& rng) { read_dataset_text("mooncake", mutate(rng, seed)); });
}

TEST(FuzzParsers, TokenizerJson) {
  const std::string seed =
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3},)"
      R"( "merges": ["a b", ["a", "b"]], "unk_token": "a", "ignore_merges": false},)"
      R"( "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},)"
      R"( "added_tokens": [{"id": 5, "content": "<s>"}]})";
  fuzz("tokenizer.json", [&](int, FuzzRng& rng) {
    const auto t = llmbench::BpeTokenizer::from_json_text(mutate(rng, seed), "fuzz.json");
    (void)t;
  });
}

TEST(FuzzParsers, BoundedJson) {
  const std::string seed = R"({"a": [1, 2.5, "x\"y", {"b": null}], "c": true})";
  fuzz("json", [&](int, FuzzRng& rng) {
    const std::string text = mutate(rng, seed);
    const auto parsed = llmbench::parse_json(text);
    if (!parsed.ok()) ASSERT_LT(parsed.error.size(), 300u);
    else (void)parsed.value.dump();  // depth <= 64: dump cannot overflow the stack
  });
}

}  // namespace
