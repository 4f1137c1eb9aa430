// File workloads of `llmbench load`, without a network:
//   - each dataset reader on its fixture file (what it keeps, skips and says), its refusals of
//     bad files (one BadInput naming file and line), and --seed-stable sampling;
//   - the trace's prompts: requests sharing a hash_ids prefix share exactly those blocks;
//   - the bodies of session turns: the whole history, with the dataset's or the server's answers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <algorithm>
#include <functional>
#include <fstream>

#include "kernels/common/error.h"
#include "tools/load/dataset.h"
#include "tools/load/load_plan.h"
#include "tools/load/session_bodies.h"
#include "tools/text/tokenizer.h"
#include "tools/load/trace_prompt.h"

namespace llmbench {
namespace {

using Ids = std::vector<std::int32_t>;
const std::string kDir = std::string(LLMBENCH_FIXTURES) + "/load";

std::string write_scratch(const std::string& name, const std::string& text) {
  const std::string dir = std::string(LLMBENCH_TEST_SCRATCH) + "/workloads";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + name) << text;
  return dir + "/" + name;
}

std::string bad_input(const std::function<void()>& f) {
  try {
    f();
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(no BadInput)";
}

// ---- datasets -------------------------------------------------------------------------------

DatasetOptions fixture(const std::string& name, const std::string& file) {
  DatasetOptions o;
  o.name = name;
  o.path = kDir + "/" + file;
  o.default_output_len = 50;
  return o;
}

TEST(ShareGpt, SingleTurnTakesTheFirstAnsweredHumanTurn) {
  DatasetOptions o = fixture("sharegpt", "sharegpt_small.json");
  const Workload w = read_sharegpt(o);
  // 6 records: "unanswered-4" has no gpt answer; the other 5 are kept (no tokenizer: no filter).
  ASSERT_EQ(w.sessions.size(), 5u);
  EXPECT_FALSE(w.multi_turn);
  EXPECT_FALSE(w.counted);
  bool saw_gpt_first = false;
  for (const WorkloadSession& s : w.sessions) {
    ASSERT_EQ(s.turns.size(), 1u);
    EXPECT_EQ(s.turns[0].output_len, 50);  // --output-len without a tokenizer
    EXPECT_EQ(s.turns[0].prompt_tokens, -1);
    if (s.turns[0].text.rfind("Then the person asks", 0) == 0) saw_gpt_first = true;
  }
  EXPECT_TRUE(saw_gpt_first);  // a record opening with gpt uses its first human turn
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes[0].find("1 record skipped (no human turn answered by gpt)"), std::string::npos);
}

TEST(ShareGpt, SamplingIsSeedStable) {
  DatasetOptions o = fixture("sharegpt", "sharegpt_small.json");
  o.num_requests = 3;
  auto first_texts = [&](std::uint64_t seed) {
    o.seed = seed;
    std::vector<std::string> t;
    for (const auto& s : read_sharegpt(o).sessions) t.push_back(s.turns[0].text);
    return t;
  };
  EXPECT_EQ(first_texts(1), first_texts(1));
  EXPECT_EQ(first_texts(1).size(), 3u);
  bool differs = false;
  for (std::uint64_t seed = 2; seed < 10 && !differs; ++seed) differs = first_texts(seed) != first_texts(1);
  EXPECT_TRUE(differs);
  // The order itself is pinned: Fisher-Yates over mt19937_64, not the library's shuffle.
  EXPECT_EQ(seeded_order(5, 42), seeded_order(5, 42));
  std::vector<std::size_t> sorted = seeded_order(50, 7);
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
}

TEST(ShareGpt, TokenizerCountsAndVllmFilters) {
  const Tokenizer tok = Tokenizer::open(kDir + "/tokenizer");
  DatasetOptions o = fixture("sharegpt", "sharegpt_small.json");
  o.tokenizer = &tok;
  const Workload w = read_sharegpt(o);
  EXPECT_TRUE(w.counted);
  // "short-6" ("Hi" / "Hello": 2 and 5 byte tokens) is under 4 prompt tokens: too short.
  ASSERT_EQ(w.sessions.size(), 4u);
  for (const WorkloadSession& s : w.sessions) {
    EXPECT_EQ(s.turns[0].prompt_tokens, int(tok.count(s.turns[0].text)));
    EXPECT_EQ(s.turns[0].output_len, int(tok.count(s.turns[0].reference_reply)));
  }
  bool said = false;
  for (const std::string& n : w.notes) said = said || n.find("1 record skipped (too short)") != std::string::npos;
  EXPECT_TRUE(said);
  // The filter's own rules (vLLM's is_valid_sequence defaults).
  const LengthFilter f;
  EXPECT_EQ(f.reject(3, 100), "too short");
  EXPECT_EQ(f.reject(100, 3), "too short");
  EXPECT_EQ(f.reject(1025, 10), "too long");
  EXPECT_EQ(f.reject(1024, 1025), "too long");
  EXPECT_EQ(f.reject(1024, 1024), "");
}

TEST(ShareGpt, MultiTurnKeepsEveryAnsweredTurn) {
  DatasetOptions o = fixture("sharegpt", "sharegpt_small.json");
  o.multi_turn = true;
  const Workload w = read_sharegpt(o);
  EXPECT_TRUE(w.multi_turn);
  std::size_t three = 0;
  for (const WorkloadSession& s : w.sessions)
    if (s.turns.size() == 3) {
      ++three;
      EXPECT_EQ(s.turns[1].text, "And what happens when the pool runs out of blocks?");
      EXPECT_EQ(s.turns[2].reference_reply,
                "The one that arrived last, so that the oldest requests keep making progress.");
    }
  EXPECT_EQ(three, 1u);
  // The unanswered question is a session of one turn here (its answer: the server's).
  EXPECT_EQ(w.sessions.size(), 6u);
}

TEST(ShareGpt, RefusesMalformedFiles) {
  DatasetOptions o = fixture("sharegpt", "");
  o.path = write_scratch("bad_sharegpt.json", R"({"conversations": []})");
  EXPECT_NE(bad_input([&] { read_sharegpt(o); }).find("expected a ShareGPT JSON list"), std::string::npos);
  o.path = write_scratch("bad_turn.json", R"([{"conversations": [{"from": "human"}]}])");
  EXPECT_NE(bad_input([&] { read_sharegpt(o); }).find("record 0: a conversation turn without"),
            std::string::npos);
}

TEST(Jsonl, ReadsPromptsMessagesAndSessions) {
  const Workload w = read_jsonl(fixture("jsonl", "jsonl_small.jsonl"));
  ASSERT_EQ(w.sessions.size(), 4u);  // two single requests, chat-a, 7
  EXPECT_TRUE(w.multi_turn);
  EXPECT_EQ(w.sessions[0].turns[0].text, "Write one sentence about the speed of light.");
  EXPECT_EQ(w.sessions[0].turns[0].output_len, 24);
  EXPECT_EQ(w.sessions[1].turns[0].prompt_ids, (Ids{101, 102, 103, 104, 105, 106, 107, 108}));
  EXPECT_EQ(w.sessions[1].turns[0].prompt_tokens, 8);
  const WorkloadSession& a = w.sessions[2];
  ASSERT_EQ(a.turns.size(), 3u);
  ASSERT_EQ(a.turns[0].messages.size(), 2u);
  EXPECT_EQ(a.turns[0].messages[0].role, "system");
  EXPECT_EQ(a.turns[0].reference_reply, "Eleven.");
  EXPECT_EQ(a.turns[0].think_ms, -1);
  EXPECT_EQ(a.turns[1].think_ms, 50);
  EXPECT_EQ(a.turns[2].think_ms, 20);
  EXPECT_EQ(w.sessions[3].turns.size(), 2u);
  DatasetOptions two = fixture("jsonl", "jsonl_small.jsonl");
  two.num_requests = 2;
  EXPECT_EQ(read_jsonl(two).sessions.size(), 2u);
  EXPECT_FALSE(read_jsonl(two).multi_turn);
}

TEST(Jsonl, RefusesBadLinesByNumber) {
  DatasetOptions o = fixture("jsonl", "");
  auto err = [&](const std::string& text) {
    o.path = write_scratch("bad.jsonl", text);
    return bad_input([&] { read_jsonl(o); });
  };
  EXPECT_NE(err("{\"prompt\": \"a\"}\n\nnot json\n").find("bad.jsonl:3: not valid JSON"), std::string::npos);
  EXPECT_NE(err("{\"prompt\": \"a\"}\n[1, 2]\n").find("bad.jsonl:2: not a JSON object"), std::string::npos);
  EXPECT_NE(err("{\"max_tokens\": 3}\n").find(":1: expected exactly one of \"prompt\" and \"messages\""),
            std::string::npos);
  EXPECT_NE(err("{\"prompt\": \"a\", \"max_tokens\": 0}\n").find("\"max_tokens\" must be an integer"),
            std::string::npos);
  EXPECT_NE(err("{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", "
                "\"content\": \"b\"}]}\n").find("the last message must be the user's"),
            std::string::npos);
  EXPECT_NE(err("{\"prompt\": \"a\", \"delay_ms\": -1}\n").find("\"delay_ms\""), std::string::npos);
  EXPECT_NE(err("\n").find("no requests"), std::string::npos);
}

// ---- traces -----------------------------------------------------------------------------------

TEST(Mooncake, ReadsTheTraceInTimeOrder) {
  DatasetOptions o = fixture("mooncake", "mooncake_small.jsonl");
  const Workload w = read_mooncake(o);
  ASSERT_EQ(w.sessions.size(), 12u);
  EXPECT_EQ(w.sessions[0].timestamp_ms, 0);
  EXPECT_EQ(w.sessions[11].timestamp_ms, 1500);
  for (const WorkloadSession& s : w.sessions) EXPECT_EQ(s.turns[0].prompt_ids.size(), std::size_t(s.turns[0].prompt_tokens));
  EXPECT_EQ(w.sessions[1].turns[0].output_len, 12);
  // 3 hash_ids at 512 need more than 1024 tokens: a trace of 16-token blocks read at 512.
  o.path = write_scratch("blocks.jsonl", "{\"timestamp\": 0, \"input_length\": 700, \"output_length\": 3, \"hash_ids\": [1]}\n"
                                         "{\"timestamp\": 5, \"input_length\": 40, \"output_length\": 3, \"hash_ids\": [1, 2, 3]}\n");
  EXPECT_EQ(bad_input([&] { read_mooncake(o); }),
            "--dataset-path " + o.path + ":2: 3 hash_ids at --hash-block-size 512 need more than "
            "1024 tokens, but \"input_length\" is 40; the trace's block size is at most 19 (--hash-block-size)");
  o.hash_block_size = 16;
  EXPECT_EQ(read_mooncake(o).sessions.size(), 2u);  // at 16 it fits: 40 > 2 x 16
  o.hash_block_size = 512;
  o.path = write_scratch("bad_trace.jsonl", "{\"timestamp\": 5, \"input_length\": 0, \"output_length\": 3}\n");
  EXPECT_NE(bad_input([&] { read_mooncake(o); }).find(":1: \"input_length\" must be an integer"),
            std::string::npos);
}

TEST(TracePrompt, SharedHashPrefixesShareExactlyThoseBlocks) {
  const int block = 16;
  const Ids a = trace_prompt_ids({5, 6, 7}, 3 * block, block, 0, 1);
  const Ids b = trace_prompt_ids({5, 6, 9}, 3 * block, block, 1, 1);
  const Ids c = trace_prompt_ids({5, 6, 7}, 2 * block + 5, block, 2, 1);  // a partial last block
  const Ids d = trace_prompt_ids({5}, 3 * block, block, 3, 1);         // longer than its blocks
  ASSERT_EQ(a.size(), std::size_t(3 * block));
  ASSERT_EQ(c.size(), std::size_t(2 * block + 5));
  auto blk = [&](const Ids& v, int k) { return Ids(v.begin() + k * block, v.begin() + std::min<int>(int(v.size()), (k + 1) * block)); };
  EXPECT_EQ(blk(a, 0), blk(b, 0));
  EXPECT_EQ(blk(a, 1), blk(b, 1));
  EXPECT_NE(blk(a, 2), blk(b, 2));
  EXPECT_EQ(Ids(a.begin(), a.begin() + 2 * block + 5), c);  // the partial block is a prefix
  EXPECT_EQ(blk(d, 0), blk(a, 0));
  EXPECT_NE(blk(d, 1), blk(a, 1));  // its own tail, shared with nobody
  EXPECT_NE(blk(d, 1), blk(trace_prompt_ids({5}, 3 * block, block, 4, 1), 1));
  EXPECT_NE(blk(a, 0), blk(trace_prompt_ids({5}, block, block, 0, 2), 0));  // the seed counts
  for (std::int32_t id : a) EXPECT_TRUE(id >= 16 && id <= 255) << id;
}

// ---- bodies -----------------------------------------------------------------------------------

TEST(SessionBodies, ChatHistoryUsesTheDatasetAnswersOrTheServers) {
  const Workload w = read_jsonl(fixture("jsonl", "jsonl_small.jsonl"));
  for (bool server : {false, true}) {
    SessionBodies b(w, BodyOptions{"m", true, true, false, server, 0});
    RequestRecord r0;
    r0.session_index = 2;
    r0.turn_index = 0;
    const auto j0 = nlohmann::json::parse(b.body(r0));
    EXPECT_EQ(j0["messages"].size(), 2u);
    r0.reply_text = "Seventeen.";
    r0.completion_tokens = 3;
    b.turn_done(r0);
    RequestRecord r1 = r0;
    r1.turn_index = 1;
    const auto j1 = nlohmann::json::parse(b.body(r1));
    ASSERT_EQ(j1["messages"].size(), 4u);
    EXPECT_EQ(j1["messages"][0]["content"], "Be brief.");
    EXPECT_EQ(j1["messages"][2]["role"], "assistant");
    EXPECT_EQ(j1["messages"][2]["content"], server ? "Seventeen." : "Eleven.");
    EXPECT_EQ(j1["messages"][3]["content"], "And the next one after it?");
    EXPECT_EQ(j1["max_tokens"], 8);
    EXPECT_EQ(r1.max_tokens, 8);
  }
}

TEST(SessionBodies, CompletionsJoinTheHistoryAsText) {
  const Workload w = read_jsonl(fixture("jsonl", "jsonl_small.jsonl"));
  SessionBodies b(w, BodyOptions{"", false, true, true, false, 0});
  RequestRecord r;
  r.session_index = 3;
  r.turn_index = 1;
  const auto j = nlohmann::json::parse(b.body(r));
  EXPECT_EQ(j["prompt"], "Describe a river in five words.\n\nCold water running downhill fast.\n\nNow a mountain.");
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_FALSE(j.contains("model"));
  // A token-id prompt goes as ids when the server takes them, else as synthetic text.
  RequestRecord ids;
  ids.session_index = 1;
  EXPECT_TRUE(nlohmann::json::parse(b.body(ids))["prompt"].is_array());
  SessionBodies text(w, BodyOptions{"", false, false, false, false, 0});
  EXPECT_TRUE(nlohmann::json::parse(text.body(ids))["prompt"].is_string());
}

TEST(LoadPlanWorkloads, ChecksTheWorkloadFlags) {
  LoadOptions o;
  o.url = "http://127.0.0.1:1";
  o.dataset_name = "sharegpt";
  EXPECT_EQ(bad_input([&] { make_load_plan(o); }), "--dataset-path: required with --dataset-name sharegpt");
  o.dataset_path = "x.json";
  o.time_scale = 2;
  EXPECT_EQ(bad_input([&] { make_load_plan(o); }), "--time-scale: applies to --dataset-name mooncake only");
  o.dataset_name = "mooncake";
  o.concurrency = "2";
  EXPECT_NE(bad_input([&] { make_load_plan(o); }).find("--concurrency/--request-rate"), std::string::npos);
  o.concurrency.clear();
  const LoadPlan p = make_load_plan(o);
  ASSERT_EQ(p.levels.size(), 1u);
  EXPECT_EQ(p.mode, LoadMode::kTrace);
  EXPECT_EQ(p.levels[0].label(), "trace x2 mooncake");
  o.dataset_name = "jsonl";
  o.time_scale = 1;
  o.concurrency = "1,4";
  const LoadPlan q = make_load_plan(o);
  ASSERT_EQ(q.levels.size(), 2u);
  EXPECT_EQ(q.levels[1].label(), "c4 jsonl");
  o.multi_turn = true;
  EXPECT_NE(bad_input([&] { make_load_plan(o); }).find("--multi-turn: applies to --dataset-name sharegpt"),
            std::string::npos);
  o.multi_turn = false;
  o.dataset_name = "alpaca";
  EXPECT_NE(bad_input([&] { make_load_plan(o); }).find("--dataset-name: expected random"), std::string::npos);
}

}  // namespace
}  // namespace llmbench
