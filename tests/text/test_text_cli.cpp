// One tokenizer for serve and load, end to end through the llmbench binary: a tiny checkpoint
// (`llmbench export-weights --model tiny`) holding the small tokenizer.json of
// tests/text/small_bpe.h is served with `llmbench serve --model DIR` (started by load's
// --server-cmd, on an ephemeral loopback port) while `llmbench load --tokenizer DIR` sends
// text prompts from a jsonl file: every request's length as load counted it (input_len) equals
// the server's usage.prompt_tokens, and differs from the byte count (the server did not fall
// back to bytes). A checkpoint whose tokenizer_config.json chat template is of no family llmbench
// renders stops serve at start-up: exit 2, one line naming the file and the families.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/cli/llmbench_process.h"
#include "tests/load/sqlite_scalar.h"
#include "tests/text/small_bpe.h"

namespace {

using llmbench_test::Result;
using llmbench_test::run_llmbench;
using llmbench_test::scalar;
using llmbench_test::scratch_dir;
namespace fs = std::filesystem;

// An exported tiny checkpoint with the small tokenizer.json, in the test's scratch folder.
fs::path bpe_checkpoint(const fs::path& dir) {
  const fs::path ckpt = dir / "ckpt";
  fs::remove_all(ckpt);
  const Result r = run_llmbench("export-weights --model tiny -o " + ckpt.string(), dir / "export");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  llmbench_test::write_small_bpe(ckpt);
  return ckpt;
}

TEST(TextCli, LoadCountsTheTokensServeRuns) {
  const fs::path dir = scratch_dir();
  const fs::path ckpt = bpe_checkpoint(dir);
  const fs::path db = dir / "bpe.db";
  fs::remove(db);
  // Text with merges ("the", " t", "er", "é") and characters of 2, 3 and 4 UTF-8 bytes.
  const std::string prompts[] = {"the server caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC and the rest",
                                 "a smile \xF0\x9F\x98\x80 here", "other tokens, then more"};
  const fs::path jsonl = dir / "text.jsonl";
  {
    std::string text;
    for (const std::string& p : prompts) text += nlohmann::json{{"prompt", p}, {"max_tokens", 4}}.dump() + "\n";
    llmbench_test::write_file(jsonl, text);
  }
  const std::string serve = std::string("'") + LLMBENCH_BIN + " serve --model " + ckpt.string() +
                            " --backend cpu --threads 1 --port {port}'";
  const Result r = run_llmbench("load --server-cmd " + serve + " --endpoint completions"
                                " --dataset-name jsonl --dataset-path " + jsonl.string() +
                                " --tokenizer " + ckpt.string() + " --quiet --db " + db.string(),
                                dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE prompt_tokens IS NOT NULL"), 4);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE input_len = prompt_tokens"), 4);
  // "the server café": t he Ġ s er v er Ġ c a f é = 12 tokens, 16 bytes.
  EXPECT_EQ(scalar(db, "SELECT prompt_tokens FROM load_request WHERE session_index = 0"), 12);
  long long bytes = 0;
  for (const std::string& p : prompts) bytes += static_cast<long long>(p.size());
  EXPECT_LT(scalar(db, "SELECT SUM(prompt_tokens) FROM load_request"), bytes);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE lengths LIKE 'counted with tokenizer.json BPE%'"), 1);
}

TEST(TextCli, ServeNamesItsTokenizerAndRefusesAnUnknownChatTemplate) {
  const fs::path dir = scratch_dir();
  const fs::path ckpt = bpe_checkpoint(dir);
  const fs::path config = ckpt / "tokenizer_config.json";
  llmbench_test::write_file(config, R"({"chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"})");
  const Result r = run_llmbench("serve --model " + ckpt.string() + " --backend cpu --threads 1 --port 0", dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(config.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("llama2, llama3, chatml, qwen2, mistral, zephyr"), std::string::npos) << r.err;
}

}  // namespace
