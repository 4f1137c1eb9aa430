// `llmbench load` with file workloads end to end against `llmbench serve --model tiny` (started
// by --server-cmd): a ShareGPT multi-turn run stores every turn with its session and turn index
// and load_ttft_by_turn reads them; a jsonl run with the tokenizer stores the counted lengths;
// a Mooncake trace replays as one trace level; bad workload flags and files are one line and
// exit 2. Every run is bounded (tiny model, few short requests). The tiny preset's context is
// 256 tokens (one a byte for text), so the ShareGPT and trace files here are short ones written
// by the test; the shipped fixtures are read in test_load_workloads.cpp.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <fstream>

#include "tests/cli/llmbench_process.h"
#include "tests/load/sqlite_scalar.h"

namespace {

using llmbench_test::Result;
using llmbench_test::run_llmbench;
using llmbench_test::scalar;
using llmbench_test::scratch_dir;
using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kServe = std::string("'") + LLMBENCH_BIN + " serve --model tiny --port {port}'";
const std::string kFixtures = std::string(LLMBENCH_FIXTURES) + "/load/";


// Three conversations of 3, 1 and 2 turns, short enough for tiny's context with history.
std::string short_sharegpt(const fs::path& dir) {
  const json turns = json::array({
      json{{"conversations", {{{"from", "human"}, {"value", "Say one word."}},
                              {{"from", "gpt"}, {"value", "Word."}},
                              {{"from", "human"}, {"value", "Another?"}},
                              {{"from", "gpt"}, {"value", "Yes."}},
                              {{"from", "human"}, {"value", "And a last one."}},
                              {{"from", "gpt"}, {"value", "Done."}}}}},
      json{{"conversations", {{{"from", "human"}, {"value", "Count to three."}},
                              {{"from", "gpt"}, {"value", "1 2 3"}}}}},
      json{{"conversations", {{{"from", "human"}, {"value", "Name a colour."}},
                              {{"from", "gpt"}, {"value", "Blue."}},
                              {{"from", "human"}, {"value", "Another colour?"}},
                              {{"from", "gpt"}, {"value", "Red."}}}}}});
  const fs::path p = dir / "short_sharegpt.json";
  std::ofstream(p) << turns.dump();
  return p.string();
}

TEST(LoadWorkloadsCli, ShareGptMultiTurnStoresTurnsAndTtftByTurn) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "sharegpt.db";
  fs::remove(db);
  const Result r = run_llmbench(
      "load --server-cmd " + kServe + " --dataset-name sharegpt --dataset-path " +
          short_sharegpt(dir) + " --multi-turn --output-len 4 --concurrency 2 --think-time-ms 5"
          " --format json --db " + db.string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("lengths: prompt tokens from the server's usage"), std::string::npos) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["run"]["dataset"], "sharegpt");
  ASSERT_EQ(out["levels"].size(), 1u);
  EXPECT_EQ(out["levels"][0]["level"], "c2 sharegpt");
  EXPECT_EQ(out["levels"][0]["requests"], 6);  // 3 + 1 + 2 turns
  EXPECT_EQ(scalar(db, "SELECT COUNT(DISTINCT session_index) FROM load_request"), 3);
  EXPECT_EQ(scalar(db, "SELECT MAX(turn_index) FROM load_request"), 2);
  // Later turns carry the history: the server counted more prompt tokens than turn 0 had.
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request a JOIN load_request b ON"
                       " a.session_index = b.session_index AND b.turn_index = a.turn_index + 1"
                       " WHERE b.prompt_tokens <= a.prompt_tokens"), 0);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE dataset_name = 'sharegpt' AND"
                       " mode = 'concurrency' AND lengths LIKE 'prompt tokens from%'"), 1);
  const Result q = run_llmbench("query " + db.string() + " load_ttft_by_turn --format json", dir);
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const json turns = json::parse(q.out);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[0]["requests"], 3);
  EXPECT_EQ(turns[1]["requests"], 2);
  EXPECT_EQ(turns[2]["requests"], 1);
  EXPECT_LT(turns[0]["input_tokens_mean"].get<double>(), turns[2]["input_tokens_mean"].get<double>());
}

TEST(LoadWorkloadsCli, JsonlWithTheTokenizerStoresCountedLengths) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "jsonl.db";
  fs::remove(db);
  const Result r = run_llmbench(
      "load --server-cmd " + kServe + " --dataset-name jsonl --dataset-path " + kFixtures +
          "jsonl_small.jsonl --tokenizer " + kFixtures + "tokenizer --num-requests 2 --quiet"
          " --db " + db.string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The first line's prompt, counted with the fixture tokenizer; the second's 8 token ids.
  EXPECT_EQ(scalar(db, "SELECT input_len FROM load_request WHERE session_index = 1"), 8);
  EXPECT_GT(scalar(db, "SELECT input_len FROM load_request WHERE session_index = 0"), 10);
  EXPECT_EQ(scalar(db, "SELECT max_tokens FROM load_request WHERE session_index = 0"), 24);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE lengths LIKE 'counted with tokenizer.json BPE%'"), 1);
}

TEST(LoadWorkloadsCli, MooncakeTraceReplaysAsOneTraceLevel) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "trace.db";
  fs::remove(db);
  const fs::path trace = dir / "trace.jsonl";
  {
    std::ofstream f(trace);
    const int stamps[] = {0, 100, 150, 300, 420, 500};
    const int lengths[] = {70, 90, 30, 110, 52, 51};
    for (int i = 0; i < 6; ++i)
      f << json{{"timestamp", stamps[i]}, {"input_length", lengths[i]}, {"output_length", 4},
                {"hash_ids", {0, 1 + i % 2}}}.dump() << "\n";
  }
  const Result r = run_llmbench(
      "load --server-cmd " + kServe + " --dataset-name mooncake --dataset-path " +
          trace.string() + " --hash-block-size 16 --time-scale 0.2 --quiet --db " + db.string(),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("trace x0.2 mooncake"), std::string::npos) << r.out;
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE scheduled_ns IS NOT NULL"), 6);
  // Timestamps 0, 100, 150, 300, 420, 500 ms x 0.2.
  EXPECT_EQ(scalar(db, "SELECT scheduled_ns FROM load_request WHERE request_index = 5"), 100'000'000);
  EXPECT_EQ(scalar(db, "SELECT SUM(input_len) FROM load_request"), 70 + 90 + 30 + 110 + 52 + 51);
  EXPECT_EQ(scalar(db, "SELECT SUM(prompt_tokens) FROM load_request"), 70 + 90 + 30 + 110 + 52 + 51);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_level WHERE concurrency IS NULL AND"
                       " request_rate IS NULL AND level = 'trace x0.2 mooncake'"), 1);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE mode = 'trace' AND hash_block_size = 16"), 1);
}

TEST(LoadWorkloadsCli, BadWorkloadInputIsOneLineAndExit2) {
  const fs::path dir = scratch_dir();
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"--dataset-name sharegpt", "--dataset-path: required with --dataset-name sharegpt"},
      {"--dataset-name jsonl --dataset-path " + kFixtures + "missing.jsonl", "--dataset-path: cannot read"},
      {"--dataset-name sharegpt --dataset-path " + kFixtures + "jsonl_small.jsonl",
       "expected a ShareGPT JSON list"},
      {"--dataset-name jsonl --dataset-path " + kFixtures + "jsonl_small.jsonl --tokenizer /nonexistent",
       "--tokenizer: '/nonexistent' is neither a directory nor a file"},
      {"--dataset-name random --time-scale 2", "--time-scale: applies to --dataset-name mooncake only"},
  };
  for (const Case& c : cases) {
    const Result r = run_llmbench("load --url http://127.0.0.1:9 " + c.args + " --db " +
                                      (dir / "bad.db").string(), dir);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
