// End-to-end tests of the `llmbench` binary: a real tiny run (formats, database rows) and every
// bad-input case of the foundation issue (exit code 2, one stderr line naming the flag, no row).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string out, err;
};

// One directory per test, so that ctest -j runs them in parallel without sharing files.
fs::path scratch_dir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  std::replace(name.begin(), name.end(), '/', '_');
  fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / "cli" / name;
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs llmbench with `args` (shell words); the roofline cache lives in the scratch dir.
Result llmbench(const std::string& args) {
  const fs::path d = scratch_dir();
  const std::string cmd = "LLMBENCH_CACHE_DIR=" + (d / "cache").string() + " " LLMBENCH_BIN " " +
                          args + " > " + (d / "out").string() + " 2> " + (d / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(d / "out"), slurp(d / "err")};
}

std::int64_t count_rows(const fs::path& db, const std::string& table) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return -1;
  }
  sqlite3_stmt* st = nullptr;
  std::int64_t n = -1;
  if (sqlite3_prepare_v2(h, ("SELECT count(*) FROM " + table).c_str(), -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

// The first column of every row of `sql` on `db`, as text.
std::vector<std::string> column_text(const fs::path& db, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3* h = nullptr;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW)
      out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

const char* kPeaks = " --peak-bw-gbps 20 --peak-tflops 0.2 ";
const char* kNoSyncWarning =
    "timer host-nosync: op times are host enqueue times without synchronisation "
    "\u2014 wrong on purpose (diagnostic)";

}  // namespace

TEST(Cli, TinyRunWritesJsonAndDatabase) {
  const fs::path db = scratch_dir() / "run.db";
  fs::remove(db);
  const Result r = llmbench("run --model tiny --batch 1,2 --prompt-len 16 --max-new-tokens 1,4 "
                            "--warmup 1 --repeat 3 --format json --db " + db.string() + kPeaks);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 4u);
  for (const auto& c : j["cases"]) {
    EXPECT_EQ(c["status"], "ok");
    EXPECT_EQ(c["samples"].size(), 3u);
    const int gen = c["max_new_tokens"], batch = c["batch"];
    EXPECT_EQ(c["generated_ids"].size(), std::size_t(batch));
    EXPECT_EQ(c["generated_ids"][0].size(), std::size_t(gen));
    EXPECT_EQ(c["prompt_ids"][0].size(), 16u);
    EXPECT_EQ(c["samples"][0]["decode_ns"].size(), std::size_t(gen - 1));
    if (gen == 1) {
      EXPECT_TRUE(c["tpot_ms_mean"].is_null());
      EXPECT_TRUE(c["mbu"].is_null());
    } else {
      EXPECT_GT(c["tpot_ms_mean"].get<double>(), 0.0);
      EXPECT_GT(c["mbu"].get<double>(), 0.0);
    }
    EXPECT_GT(c["ttft_ms_p50"].get<double>(), 0.0);
    EXPECT_GT(c["mfu"].get<double>(), 0.0);
  }
  EXPECT_EQ(count_rows(db, "run"), 1);
  EXPECT_EQ(count_rows(db, "bench_case"), 4);
  EXPECT_EQ(count_rows(db, "bench_sample"), 12);
  EXPECT_EQ(count_rows(db, "bench_step"), 2 * 3 * 3);  // two gen-4 cases x 3 reps x 3 steps
  // A second run appends.
  ASSERT_EQ(llmbench("run --model tiny --prompt-len 8 --max-new-tokens 2 --repeat 1 --db " +
                     db.string() + kPeaks).exit_code, 0);
  EXPECT_EQ(count_rows(db, "run"), 2);
}

TEST(Cli, RaggedRunStoresEachSequencesLengthsAndItsDistribution) {
  const fs::path db = scratch_dir() / "ragged.db";
  fs::remove(db);
  const std::string ragged = "run --model tiny --batch 5 --prompt-len 20 --max-new-tokens 6 "
                             "--distinct-prompts --warmup 0 --repeat 2 --format json --db " +
                             db.string() + kPeaks;
  const Result r = llmbench(ragged + " --prompt-len-stddev 8 --output-len-stddev 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto c = nlohmann::json::parse(r.out)["cases"][0];
  ASSERT_EQ(c["status"], "ok") << c.dump();
  EXPECT_EQ(c["variants"], "prompt_len_stddev=8 output_len_stddev=3");
  ASSERT_EQ(c["prompt_ids"].size(), 5u);
  ASSERT_EQ(c["generated_ids"].size(), 5u);
  std::set<std::size_t> prompt_lens, output_lens;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    prompt_lens.insert(c["prompt_ids"][i].size());
    output_lens.insert(c["generated_ids"][i].size());
    longest = std::max(longest, c["generated_ids"][i].size());
  }
  EXPECT_GT(prompt_lens.size(), 1u);  // the lengths vary
  EXPECT_GT(output_lens.size(), 1u);
  EXPECT_EQ(c["samples"][0]["decode_ns"].size(), longest - 1);
  // The same command draws the same lengths and generates the same tokens.
  const Result again = llmbench(ragged + " --prompt-len-stddev 8 --output-len-stddev 3");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto c2 = nlohmann::json::parse(again.out)["cases"][0];
  EXPECT_EQ(c2["prompt_ids"], c["prompt_ids"]);
  EXPECT_EQ(c2["generated_ids"], c["generated_ids"]);
  // Stddev 0 is the static path: every prompt 20 tokens, every output 6, no ragged keys.
  const Result flat = llmbench(ragged + " --prompt-len-stddev 0 --output-len-stddev 0");
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  const auto c3 = nlohmann::json::parse(flat.out)["cases"][0];
  EXPECT_EQ(c3["variants"], "default");
  for (const auto& g : c3["generated_ids"]) EXPECT_EQ(g.size(), 6u);
  for (const auto& p : c3["prompt_ids"]) EXPECT_EQ(p.size(), 20u);
  EXPECT_EQ(count_rows(db, "bench_case"), 3);
}

TEST(Cli, TableMarkdownAndCsvShowNotApplicable) {
  const fs::path db = scratch_dir() / "fmt.db";
  const std::string base = "run --model tiny --prompt-len 8 --max-new-tokens 1 --repeat 1 --db " +
                           db.string() + kPeaks + " --quiet --format ";
  const Result table = llmbench(base + "table");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("ttft_ms"), std::string::npos);
  EXPECT_NE(table.out.find("n/a"), std::string::npos);
  EXPECT_TRUE(table.err.empty()) << table.err;
  const Result md = llmbench(base + "md");
  EXPECT_EQ(md.out.rfind("| model |", 0), 0u) << md.out;
  const Result csv = llmbench(base + "csv");
  EXPECT_EQ(csv.out.rfind("schema_version,run_id,git_commit,model,dtype,backend,batch", 0), 0u)
      << csv.out;
  EXPECT_NE(csv.out.find(",,"), std::string::npos);  // n/a is an empty cell, never 0
}

TEST(Cli, CaseThatCannotFitIsRefusedAndRecordedWhileLaterCasesRun) {
  // Batch 1e6 x 200 tokens needs hundreds of GiB of activations and KV cache: refused before
  // allocating, recorded as an error; the batch-1 case after it still runs. Exit code 1.
  const fs::path db = scratch_dir() / "mem.db";
  fs::remove(db);
  const Result r = llmbench("run --model tiny --batch 1000000,1 --prompt-len 200 --max-new-tokens 1"
                            " --repeat 1 --format json --quiet --db " + db.string() + kPeaks);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["status"], "error");
  const std::string msg = j["cases"][0]["error"];
  EXPECT_NE(msg.find("not enough host memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("available"), std::string::npos) << msg;
  EXPECT_EQ(j["cases"][1]["status"], "ok");
  EXPECT_EQ(count_rows(db, "bench_case"), 2);
}

TEST(Cli, PromptIdsAreUsedForEverySequenceAndReported) {
  const fs::path d = scratch_dir();
  { std::ofstream(d / "ids.txt") << "5, 6\n7\n"; }
  std::string from_file = "@";
  from_file += (d / "ids.txt").string();
  for (const std::string& ids : {std::string("5,6,7"), from_file}) {
    const Result r = llmbench("run --model tiny --batch 2 --max-new-tokens 2 --repeat 1 --quiet"
                              " --format json --prompt-ids " + ids + " --db " +
                              (d / "ids.db").string() + kPeaks);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto c = nlohmann::json::parse(r.out)["cases"][0];
    EXPECT_EQ(c["prompt_len"], 3);
    EXPECT_EQ(c["prompt_ids"], nlohmann::json::parse("[[5, 6, 7], [5, 6, 7]]"));
  }
}

TEST(Cli, CheckpointDirectoryRunsLikeThePresetItWasExportedFrom) {
  const fs::path d = scratch_dir();
  fs::remove_all(d / "ckpt");
  ASSERT_EQ(llmbench("export-weights --model tiny --seed 3 --dtype fp32 -o " + (d / "ckpt").string())
                .exit_code, 0);
  std::vector<nlohmann::json> generated;
  for (const std::string& model : {std::string("tiny"), (d / "ckpt").string()}) {
    const Result r = llmbench("run --model " + model + " --seed 3 --batch 2 --max-new-tokens 4"
                              " --repeat 1 --quiet --format json --prompt-ids 1,2,3,4 --db " +
                              (d / "ckpt.db").string() + kPeaks);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    generated.push_back(nlohmann::json::parse(r.out)["cases"][0]["generated_ids"]);
  }
  EXPECT_EQ(generated[0], generated[1]);

  // A truncated checkpoint is bad input: exit 2, one line naming --model and the file, no row.
  fs::resize_file(d / "ckpt" / "model.safetensors", 1000);
  fs::remove(d / "bad.db");
  const Result bad = llmbench("run --model " + (d / "ckpt").string() + " --db " +
                              (d / "bad.db").string() + kPeaks);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("error: --model: ", 0), 0u) << bad.err;
  EXPECT_NE(bad.err.find("model.safetensors"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(d / "bad.db"));
}

TEST(Cli, HalfDtypesRunAndStoreTwoByteWeights) {
  // --dtype is a list: one case per dtype. tiny: matrices 2 x 256 x 64 (embedding, untied
  // head) + 2 layers x 43008 = 118784 params, norm weights 2 x 2 x 64 + 64 = 320 params (fp32).
  const fs::path db = scratch_dir() / "run.db";
  fs::remove(db);
  const Result r = llmbench("run --model tiny --dtype fp32,bf16,fp16 --prompt-len 8 "
                            "--max-new-tokens 3 --repeat 1 --quiet --format json --db " +
                            db.string() + kPeaks);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 3u);
  for (const auto& c : j["cases"]) EXPECT_EQ(c["status"], "ok") << c.dump();
  EXPECT_EQ(column_text(db, "SELECT dtype || ':' || weight_bytes FROM bench_case ORDER BY id"),
            (std::vector<std::string>{"fp32:" + std::to_string((118784 + 320) * 4),
                                      "bf16:" + std::to_string(118784 * 2 + 320 * 4),
                                      "fp16:" + std::to_string(118784 * 2 + 320 * 4)}));
}

TEST(Cli, Bf16CheckpointLoadedAsBf16RunsLikeThePreset) {
  // export-weights narrows the fp32 random values to bf16 (nearest even); loading them as bf16
  // widens and narrows again, which keeps the bits: the same weights as the preset in bf16.
  const fs::path d = scratch_dir();
  fs::remove_all(d / "ckpt");
  ASSERT_EQ(
      llmbench("export-weights --model tiny --seed 3 --dtype bf16 -o " + (d / "ckpt").string())
          .exit_code,
      0);
  std::vector<nlohmann::json> generated;
  for (const std::string& model : {std::string("tiny"), (d / "ckpt").string()}) {
    const Result r = llmbench("run --model " + model + " --dtype bf16 --seed 3 --batch 2 "
                              "--max-new-tokens 6 --repeat 1 --quiet --format json --prompt-ids "
                              "5,6,7,8,9 --db " + (d / "ckpt.db").string() + kPeaks);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    generated.push_back(nlohmann::json::parse(r.out)["cases"][0]["generated_ids"]);
  }
  EXPECT_EQ(generated[0], generated[1]);
}

TEST(Cli, QuantisedDtypesStoreBlockBytesAndQuantiseCheckpointsLikeThePreset) {
  // tiny's quantised matrices (layers and LM head, 118784 - 16384 embedding weights) = 3200
  // blocks of 32: int8 34 bytes a block, int4 18; the 16384-weight embedding table and the
  // 320 norm weights stay fp32.
  const fs::path d = scratch_dir();
  fs::remove(d / "quant.db");
  const Result r = llmbench("run --model tiny --dtype int8,int4 --prompt-len 40 "
                            "--max-new-tokens 3 --repeat 1 --quiet --format json --db " +
                            (d / "quant.db").string() + kPeaks);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 2u);
  for (const auto& c : j["cases"]) EXPECT_EQ(c["status"], "ok") << c.dump();
  EXPECT_EQ(column_text(d / "quant.db", "SELECT dtype || ':' || weight_bytes FROM bench_case "
                                        "ORDER BY id"),
            (std::vector<std::string>{"int8:" + std::to_string(3200 * 34 + (16384 + 320) * 4),
                                      "int4:" + std::to_string(3200 * 18 + (16384 + 320) * 4)}));

  // An fp32 checkpoint of the same seed quantises to the same blocks: the same tokens.
  fs::remove_all(d / "qckpt");
  ASSERT_EQ(llmbench("export-weights --model tiny --seed 3 --dtype fp32 -o " +
                     (d / "qckpt").string()).exit_code, 0);
  std::vector<nlohmann::json> generated;
  for (const std::string& model : {std::string("tiny"), (d / "qckpt").string()}) {
    const Result g = llmbench("run --model " + model + " --dtype int4 --seed 3 --batch 2 "
                              "--max-new-tokens 6 --repeat 1 --quiet --format json --prompt-ids "
                              "5,6,7,8,9 --db " + (d / "qckpt.db").string() + kPeaks);
    ASSERT_EQ(g.exit_code, 0) << g.err;
    generated.push_back(nlohmann::json::parse(g.out)["cases"][0]["generated_ids"]);
  }
  EXPECT_EQ(generated[0], generated[1]);

  // Checkpoints stay float: export-weights refuses the block formats.
  const Result bad = llmbench("export-weights --model tiny --dtype int8 -o " +
                              (d / "never").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("expected fp32, fp16 or bf16"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(d / "never"));
}

TEST(Cli, ModelsListsEveryPreset) {
  const Result r = llmbench("models");
  ASSERT_EQ(r.exit_code, 0);
  for (const char* name : {"tiny", "small", "tinyllama-1.1b", "qwen2.5-0.5b", "llama2-7b",
                           "llama3-8b", "mistral-7b"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

TEST(Cli, VariantsRunStoreTheirJsonAndTraceTheirOps) {
  const fs::path db = scratch_dir() / "variants.db";
  fs::remove(db);
  const std::string common = "run --model tiny --batch 2 --prompt-len 10 --max-new-tokens 3"
                             " --repeat 1 --distinct-prompts --format json --quiet" +
                             std::string(kPeaks) + "--db " + db.string();
  const Result fast = llmbench(common);
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  const Result r = llmbench(common + " --qkv permute --kv-cache concat,paged --kv-cache-block 4"
                            " --logits all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 2u);
  const auto expected_tokens = nlohmann::json::parse(fast.out)["cases"][0]["generated_ids"];
  for (const auto& c : j["cases"]) {
    EXPECT_EQ(c["generated_ids"], expected_tokens) << c["variants"];
    EXPECT_FALSE(c.contains("timer_warning"));
  }
  // One rendering of the variants in json, csv, the table and the bundled queries.
  EXPECT_EQ(j["cases"][0]["variants"], "qkv=permute kv_cache=concat logits=all");
  EXPECT_EQ(j["cases"][1]["variants"], "qkv=permute kv_cache=paged/4 logits=all");
  const fs::path db2 = scratch_dir() / "variants_csv.db";
  fs::remove(db2);
  const Result csv = llmbench(common.substr(0, common.find("--format")) + "--format csv --quiet" +
                              std::string(kPeaks) + "--db " + db2.string() +
                              " --qkv permute --kv-cache paged --kv-cache-block 4 --logits all");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",qkv=permute kv_cache=paged/4 logits=all,"), std::string::npos)
      << csv.out;
  const Result q = llmbench("query " + db2.string() + " case_summary --format csv");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find(",qkv=permute kv_cache=paged/4 logits=all,"), std::string::npos) << q.out;
  EXPECT_EQ(q.out.find("{"), std::string::npos) << "JSON variants in the query output";

  // bench_case.variants: a JSON object with sorted keys, per case, in run order.
  EXPECT_EQ(column_text(db, "SELECT variants FROM bench_case ORDER BY id"),
            (std::vector<std::string>{
                R"({"kv_cache":"prealloc","logits":"device","qkv":"fused","timer":"device"})",
                R"({"kv_cache":"concat","logits":"all","qkv":"permute","timer":"device"})",
                R"({"kv_cache":"paged","kv_cache_block":4,"logits":"all","qkv":"permute",)"
                R"("timer":"device"})"}));
  // The variant ops are traced under their own names, in the cases that run them.
  auto ops_of = [&](int case_index) {
    const auto names = column_text(
        db, "SELECT DISTINCT name FROM event WHERE case_id = (SELECT id FROM bench_case"
            " ORDER BY id LIMIT 1 OFFSET " + std::to_string(case_index) + ")");
    return std::set<std::string>(names.begin(), names.end());
  };
  const auto fast_ops = ops_of(0), concat_ops = ops_of(1), paged_ops = ops_of(2);
  for (const char* op : {"permute_q", "permute_k", "permute_v", "permute_out", "logits_to_host",
                         "argmax_host"}) {
    EXPECT_TRUE(concat_ops.count(op)) << op;
    EXPECT_TRUE(paged_ops.count(op)) << op;
    EXPECT_FALSE(fast_ops.count(op)) << op;
  }
  for (const char* op : {"kv_concat_k", "kv_concat_v"}) EXPECT_TRUE(concat_ops.count(op)) << op;
  for (const char* op : {"kv_write_paged_k", "kv_write_paged_v", "paged_attention",
                         "block_table_to_device"})
    EXPECT_TRUE(paged_ops.count(op)) << op;
  EXPECT_FALSE(paged_ops.count("kv_concat_k"));
  EXPECT_FALSE(concat_ops.count("kv_write_k"));
}

TEST(Cli, FuseSmallRunsTheSameTokensUnderItsOwnLabelAndOps) {
  const fs::path db = scratch_dir() / "fuse.db";
  fs::remove(db);
  const Result r = llmbench("run --model tiny --batch 2 --prompt-len 10 --max-new-tokens 3"
                            " --repeat 1 --distinct-prompts --format json --quiet --fuse none,small" +
                            std::string(kPeaks) + "--db " + db.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][1]["generated_ids"], j["cases"][0]["generated_ids"]);
  EXPECT_EQ(j["cases"][0]["variants"], "default");
  EXPECT_EQ(j["cases"][1]["variants"], "fuse=small");
  // Stored only when fused, so unfused cases keep the JSON they always had.
  EXPECT_EQ(column_text(db, "SELECT variants FROM bench_case ORDER BY id"),
            (std::vector<std::string>{
                R"({"kv_cache":"prealloc","logits":"device","qkv":"fused","timer":"device"})",
                R"({"fuse":"small","kv_cache":"prealloc","logits":"device","qkv":"fused",)"
                R"("timer":"device"})"}));
  const auto names = column_text(
      db, "SELECT DISTINCT name FROM event WHERE case_id = (SELECT max(id) FROM bench_case)");
  const std::set<std::string> ops(names.begin(), names.end());
  for (const char* op : {"attn_residual_norm", "ffn_residual_norm", "rope_kv_write", "swiglu_down"})
    EXPECT_TRUE(ops.count(op)) << op;
  for (const char* op : {"attn_residual", "ffn_norm", "rope_q", "kv_write_k", "swiglu", "down_proj"})
    EXPECT_FALSE(ops.count(op)) << op;
}

TEST(Cli, HostNoSyncIsLabelledInEveryFormat) {
  const fs::path db = scratch_dir() / "nosync.db";
  const std::string base = "run --model tiny --prompt-len 8 --max-new-tokens 2 --repeat 1"
                           " --timer device,host-nosync --quiet --db " + db.string() + kPeaks +
                           " --format ";
  for (const std::string format : {"table", "md", "csv", "json"}) {
    SCOPED_TRACE(format);
    const Result r = llmbench(base + format);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // stderr: the warning, even with --quiet, and nothing else.
    EXPECT_EQ(r.err, std::string("warning: ") + kNoSyncWarning + "\n");
    if (format == "json") {
      const auto j = nlohmann::json::parse(r.out);
      // The read-roof warning (roof_check) may follow it: the probe beside the case is
      // compared with --peak-bw-gbps 20, and this machine's bandwidth drifts.
      const auto& w = j["warnings"];
      EXPECT_NE(std::find(w.begin(), w.end(), kNoSyncWarning), w.end()) << w;
      EXPECT_EQ(j["cases"][0]["variants"], "default");
      EXPECT_FALSE(j["cases"][0].contains("timer_warning"));
      EXPECT_EQ(j["cases"][1]["variants"], "timer=host-nosync");
      EXPECT_EQ(j["cases"][1]["timer_warning"], kNoSyncWarning);
      continue;
    }
    EXPECT_NE(r.out.find("op_timer"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("host-nosync (wrong on purpose)"), std::string::npos) << r.out;
    // table and md repeat the warning under the table; csv stays header + rows.
    const bool has_note = r.out.find(kNoSyncWarning) != std::string::npos;
    EXPECT_EQ(has_note, format != "csv") << r.out;
    if (format == "csv") {
      EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
    }
  }
  // A run without host-nosync says nothing of it.
  const Result plain = llmbench("run --model tiny --prompt-len 8 --max-new-tokens 1 --repeat 1"
                                " --quiet --db " + db.string() + kPeaks);
  ASSERT_EQ(plain.exit_code, 0);
  // Nothing on stderr with --quiet, but for the one debug-build line when built without
  // optimisation (LLMBENCH_PRODUCT_OPTIMIZED: tests/CMakeLists.txt, the binary's build type).
#if LLMBENCH_PRODUCT_OPTIMIZED
  EXPECT_TRUE(plain.err.empty()) << plain.err;
#else
  EXPECT_EQ(plain.err, "warning: debug build, performance may be affected\n");
#endif
  EXPECT_EQ(plain.out.find("wrong on purpose"), std::string::npos);
}

// A mistyped subcommand or flag gets one line naming it and its nearest correction; a bare
// `llmbench` prints the usage. All exit 2 (bad input) and run nothing.
TEST(Cli, TyposNameTheNearestSubcommandOrFlagAndABareCallPrintsUsage) {
  const Result sub = llmbench("runn --batch 1");
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_EQ(sub.err.rfind("error: unknown subcommand 'runn' (did you mean 'run'?)", 0), 0u)
      << sub.err;
  EXPECT_EQ(std::count(sub.err.begin(), sub.err.end(), '\n'), 1) << sub.err;
  const Result far = llmbench("benchmark");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_NE(far.err.find("unknown subcommand 'benchmark'"), std::string::npos) << far.err;
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;

  const Result flag = llmbench("run --model tiny --bach 16");
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_EQ(flag.err.rfind("error: run: unknown flag '--bach' (did you mean --batch?)", 0), 0u)
      << flag.err;
  EXPECT_EQ(std::count(flag.err.begin(), flag.err.end(), '\n'), 1) << flag.err;
  const Result eq = llmbench("run --model tiny --prompt_len=8");
  EXPECT_EQ(eq.exit_code, 2);
  EXPECT_NE(eq.err.find("unknown flag '--prompt_len' (did you mean --prompt-len?)"),
            std::string::npos) << eq.err;
  // A flag of a nested subcommand (import nsys) is looked up among that subcommand's flags.
  const Result nested = llmbench("import nsys x.sqlite --dbb y.db");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.err.find("import nsys: unknown flag '--dbb' (did you mean --db?)"),
            std::string::npos) << nested.err;

  // Another tool's flag names llmbench's instead (tools/cli/peer_flags.h).
  const Result peer = llmbench("load --url http://127.0.0.1:9 --num-prompts 10");
  EXPECT_EQ(peer.exit_code, 2);
  EXPECT_EQ(peer.err, "error: load: unknown flag '--num-prompts' (vLLM's --num-prompts is "
                      "--num-requests here); `llmbench load --help` lists the flags\n");

  const Result bare = llmbench("");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_TRUE(bare.out.empty()) << bare.out;
  for (const char* word : {"Usage", "run", "load", "report", "--help"})
    EXPECT_NE(bare.err.find(word), std::string::npos) << word << " missing from\n" << bare.err;
  const Result help = llmbench("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Usage"), std::string::npos);
}

struct BadInputCase {
  const char* args;
  const char* must_mention;
};

// Names the case by its arguments in ctest's output.
void PrintTo(const BadInputCase& c, std::ostream* os) { *os << c.args; }

class CliBadInput : public testing::TestWithParam<BadInputCase> {};

TEST_P(CliBadInput, ExitsTwoWithOneLineAndWritesNoRow) {
  const fs::path db = scratch_dir() / "bad.db";
  fs::remove(db);
  std::string args = std::string("run --model tiny --repeat 1") + kPeaks + GetParam().args;
  if (args.find("--db") == std::string::npos) args += " --db " + db.string();
  const Result r = llmbench(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().must_mention), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(fs::exists(db)) << "a database was written";
}

INSTANTIATE_TEST_SUITE_P(
    Foundation, CliBadInput,
    testing::Values(BadInputCase{"--batch 0", "--batch"}, BadInputCase{"--batch -3", "--batch"},
                    BadInputCase{"--batch=-3", "--batch"}, BadInputCase{"--batch abc", "--batch"},
                    BadInputCase{"--batch 1,,2", "--batch"},
                    BadInputCase{"--prompt-len 0", "--prompt-len"},
                    BadInputCase{"--prompt-len 250 --max-new-tokens 10", "context length"},
                    BadInputCase{"--model no-such-preset", "--model"},
                    BadInputCase{"--model /nonexistent/dir", "--model"},
                    BadInputCase{"--threads -1", "--threads"},
                    BadInputCase{"--db /nonexistent/dir/x.db", "--db"},
                    BadInputCase{"--dtype fp8", "--dtype"},
                    BadInputCase{"--format xml", "--format"},
                    BadInputCase{"--no-such-flag", "--no-such-flag"},
                    BadInputCase{"--bach 16", "did you mean --batch?"},
                    BadInputCase{"--prompt-ids 1,x", "--prompt-ids"},
                    BadInputCase{"--prompt-ids 1,256", "--prompt-ids"},
                    BadInputCase{"--prompt-ids @/nonexistent/ids.txt", "--prompt-ids"},
                    BadInputCase{"--prompt-ids 1,2 --prompt-len 5", "--prompt-len"},
                    BadInputCase{"--trace everything", "--trace"},
                    BadInputCase{"--qkv transpose", "--qkv"},
                    BadInputCase{"--qkv fused,,permute", "--qkv"},
                    BadInputCase{"--kv-cache ring", "--kv-cache"},
                    BadInputCase{"--kv-cache paged --kv-cache-block 0", "--kv-cache-block"},
                    BadInputCase{"--kv-cache-block x", "--kv-cache-block"},
                    BadInputCase{"--logits none", "--logits"},
                    BadInputCase{"--logits device,everything", "--logits"},
                    BadInputCase{"--timer cuda-events", "--timer"},
                    BadInputCase{"--fuse all", "--fuse: expected none or small, got 'all'"},
                    BadInputCase{"--fuse small,small", "--fuse"},
                    BadInputCase{"--prompt-len-stddev 4 --fuse small", "fuse=small"},
                    BadInputCase{"--decode-attention flash",
                                 "--decode-attention: expected tiled or streamed, got 'flash'"},
                    BadInputCase{"--decode-attention tiled,tiled", "--decode-attention"},
                    BadInputCase{"--backend cpu --decode-attention tiled,streamed",
                                 "--decode-attention streamed needs --backend cuda"},
                    BadInputCase{"--prompt-len-stddev -1", "--prompt-len-stddev"},
                    BadInputCase{"--prompt-len-stddev abc", "--prompt-len-stddev"},
                    BadInputCase{"--prompt-len-stddev nan", "--prompt-len-stddev"},
                    BadInputCase{"--output-len-stddev inf", "--output-len-stddev"},
                    BadInputCase{"--output-len-stddev 1e99", "--output-len-stddev"},
                    BadInputCase{"--prompt-len-stddev 4 --qkv permute", "--prompt-len-stddev"},
                    BadInputCase{"--output-len-stddev 2 --variants naive", "--output-len-stddev"},
                    BadInputCase{"--prompt-len-stddev 4 --prompt-ids 1,2,3",
                                 "--prompt-len-stddev"}),
    [](const testing::TestParamInfo<BadInputCase>& info) {
      std::string name;
      for (const char* p = info.param.args; *p; ++p)
        name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
      return name + "_" + std::to_string(info.index);
    });
