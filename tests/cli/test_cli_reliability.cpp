// The llmbench binary against the bad inputs of issue 15 that are about `run`: flags that
// cannot be combined (--variants with --qkv given at its default), non-finite peaks, repeated
// list values, plans over the case limit, FIFOs where files are expected (real FIFOs, each
// command under a timeout so a hang fails instead of blocking ctest), NaN/Inf weights and
// overflowing activations, the memory guard's message, and a full disk (a file size limit set
// in the child with `ulimit -f`, which needs no privileges). Each bad input ends with one
// `error:` line and exit 2 with nothing created, unless the case says otherwise.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "tests/cli/llmbench_process.h"
#include "tests/import/sqlite_rows.h"

namespace {

using namespace llmbench_test;
using nlohmann::json;

const std::string kPeaks = " --peak-bw-gbps 20 --peak-tflops 0.2 ";
const std::string kQuick = " --repeat 1 --warmup 0 --trace off --quiet --prompt-len 8 ";

// Expects exit 2, exactly one stderr line starting "error: " and containing `mention`, and
// nothing on stdout.
void expect_refused(const Result& r, const std::string& mention, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << what << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
  EXPECT_NE(r.err.find(mention), std::string::npos) << what << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << what << "\n" << r.out;
}

// `run ... --db DIR/x.db` refused, and no database created.
void expect_run_refused(const std::string& args, const std::string& mention) {
  const fs::path db = scratch_dir() / "x.db";
  fs::remove(db);
  const std::string model = args.find("--model") == std::string::npos ? "--model tiny" : "";
  const Result r = run_llmbench("run " + model + kPeaks + args + " --db " + db.string());
  expect_refused(r, mention, args);
  EXPECT_FALSE(fs::exists(db)) << args << ": a database was created";
}

// ---- 5: --variants sets --qkv, --kv-cache and --logits: giving one at all is refused ------

TEST(RunReliability, VariantsRefuseVariantFlagsEvenAtTheirDefaults) {
  expect_run_refused("--variants naive --qkv fused", "--variants: cannot be combined with --qkv");
  expect_run_refused("--variants naive --kv-cache prealloc",
                     "--variants: cannot be combined with --kv-cache");
  expect_run_refused("--variants fast --logits device",
                     "--variants: cannot be combined with --logits");
  expect_run_refused("--variants naive --qkv permute", "--variants: cannot be combined");
  // The same from a profile: the key names the profile's line.
  const fs::path toml = scratch_dir() / "v.toml";
  write_file(toml, "model = \"tiny\"\nvariants = \"naive\"\nqkv = \"fused\"\n");
  expect_run_refused("--config " + toml.string(), "cannot be combined with --qkv");
}

// ---- 6: peaks and SLO limits must be finite -----------------------------------------------

TEST(RunReliability, NonFinitePeaksAndLimitsAreRefused) {
  const fs::path db = scratch_dir() / "x.db";
  for (const std::string flag : {"--peak-bw-gbps", "--peak-tflops"})
    for (const std::string value : {"inf", "1e400", "-inf", "nan", "0"}) {
      fs::remove(db);
      const std::string other = flag == "--peak-bw-gbps" ? " --peak-tflops 0.2"
                                                         : " --peak-bw-gbps 20";
      const Result r = run_llmbench("run --model tiny" + other + " " + flag + " " + value +
                                    " --db " + db.string());
      expect_refused(r, flag, flag + " " + value);
      EXPECT_FALSE(fs::exists(db));
    }
  expect_run_refused("--slo-ttft-p99-ms inf", "--slo-ttft-p99-ms");
  expect_run_refused("--slo-tpot-p99-ms 1e999", "--slo-tpot-p99-ms");
}

// ---- 12: a value listed twice would run the same cases twice --------------------------------

TEST(RunReliability, RepeatedListValuesAreRefused) {
  expect_run_refused("--batch 4,4", "--batch: 4 is listed twice");
  expect_run_refused("--batch 4,04", "--batch: 4 is listed twice");  // the same number
  expect_run_refused("--prompt-len 8,16,8", "--prompt-len: 8 is listed twice");
  expect_run_refused("--max-new-tokens 2,2", "--max-new-tokens: 2 is listed twice");
  expect_run_refused("--model tiny,tiny", "--model: 'tiny' is listed twice");
  expect_run_refused("--dtype fp32,bf16,fp32", "--dtype: 'fp32' is listed twice");
  expect_run_refused("--qkv permute,permute", "--qkv: 'permute' is listed twice");
  expect_run_refused("--kv-cache paged,concat,paged", "--kv-cache: 'paged' is listed twice");
  expect_run_refused("--logits all,all", "--logits: 'all' is listed twice");
  expect_run_refused("--timer device,device", "--timer: 'device' is listed twice");
  expect_run_refused("--variants naive,naive", "--variants: 'naive' is listed twice");
  const fs::path toml = scratch_dir() / "dup.toml";
  write_file(toml, "model = \"tiny\"\nbatch = [1, 2, 1]\n");
  expect_run_refused("--config " + toml.string(), "dup.toml:2: key 'batch'");
}

// ---- 10: the case count is taken before the plan is built -----------------------------------

std::string range_list(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += (i > 1 ? "," : "") + std::to_string(i);
  return s;
}

TEST(RunReliability, HugePlansAreRefusedBeforeTheyAreBuilt) {
  // 1000 x 100 x 100 = 10 M cases: planning them took 45 s and 4.4 GiB; now refused at once.
  const auto t0 = std::chrono::steady_clock::now();
  expect_run_refused("--batch " + range_list(1000) + " --prompt-len " + range_list(100) +
                         " --max-new-tokens " + range_list(100),
                     "--max-cases: the plan has 10000000 cases (1 model x 1 dtype x 1 variant x "
                     "1000 batch x 100 prompt-len x 100 max-new-tokens), over the limit of "
                     "100000");
  // 7.2 billion (with every variant list too): no bad_alloc, the same one line.
  expect_run_refused("--batch " + range_list(3000) + " --prompt-len " + range_list(100) +
                         " --max-new-tokens " + range_list(100) +
                         " --kv-cache prealloc,concat,paged,paged-gather --qkv fused,permute "
                         "--logits device,last,all --timer device,host-nosync --dtype fp32,bf16,fp16",
                     "over the limit of 100000");
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10.0) << "refusing a huge plan should not build it";
  // --max-cases raises or lowers the limit; the count is per shard.
  expect_run_refused("--batch 1,2,3 --max-cases 2", "the plan has 3 cases");
  expect_run_refused("--batch 1,2,3,4,5 --shard 1/2 --max-cases 2",
                     "shard 1/2 has 3 of the plan's 5 cases");
  expect_run_refused("--max-cases 0", "--max-cases");
  const fs::path db = scratch_dir() / "ok.db";
  fs::remove(db);
  const Result ok = run_llmbench("run --model tiny --batch 1,2,3,4,5 --shard 2/2 --max-cases 2 "
                                 "--max-new-tokens 1 --format json" + kQuick + kPeaks +
                                 "--db " + db.string());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const json cases = json::parse(ok.out)["cases"];
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0]["batch"], 2);
  EXPECT_EQ(cases[1]["batch"], 4);
}

// ---- 7: a FIFO where a file is expected is refused before it is opened ---------------------

// Runs `llmbench <args>` under a 60 s timeout: a hang is exit 124, not a stuck ctest.
Result run_timed(const std::string& args) {
  const fs::path dir = scratch_dir();
  const std::string cmd = "timeout 60 env LLMBENCH_CACHE_DIR=" + (dir / "cache").string() + " " +
                          LLMBENCH_BIN + " " + args + " > " + (dir / "out").string() + " 2> " +
                          (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

TEST(RunReliability, FifosAreRefusedInsteadOfBlocking) {
  const fs::path dir = scratch_dir();
  const fs::path ckpt = dir / "ckpt";
  fs::remove_all(ckpt);
  ASSERT_EQ(run_llmbench("export-weights --model tiny --dtype fp32 -o " + ckpt.string()).exit_code,
            0);
  fs::remove(ckpt / "model.safetensors");
  ASSERT_EQ(::mkfifo((ckpt / "model.safetensors").c_str(), 0644), 0) << std::strerror(errno);
  const fs::path fifo = dir / "pipe";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  const fs::path db = dir / "x.db";
  fs::remove(db);
  const std::string to = "--db " + db.string();
  struct Case {
    std::string args, mention;
  } cases[] = {
      {"run --model " + ckpt.string() + kPeaks + to,
       "model.safetensors': is a FIFO (named pipe), not a regular file"},
      {"run --model tiny --prompt-ids @" + fifo.string() + kPeaks + to,
       "--prompt-ids: file '" + fifo.string() + "' is a FIFO"},
      {"run --model tiny" + kPeaks + "--db " + fifo.string(), "--db '" + fifo.string() + "' is a FIFO"},
      {"import chrome " + fifo.string() + " " + to, "chrome trace '" + fifo.string() + "' is a FIFO"},
      {"import nsys " + fifo.string() + " " + to, "nsys export '" + fifo.string() + "' is a FIFO"},
      {"query " + fifo.string() + " case_summary", "database '" + fifo.string() + "' is a FIFO"},
  };
  for (const Case& c : cases) {
    const Result r = run_timed(c.args);
    expect_refused(r, c.mention, c.args);
    EXPECT_FALSE(fs::exists(db)) << c.args;
  }
  // A query file that is a FIFO, on a real database.
  ASSERT_EQ(run_timed("run --model tiny --max-new-tokens 1" + kQuick + kPeaks + to).exit_code, 0);
  const fs::path sql_fifo = dir / "pipe.sql";
  fs::remove(sql_fifo);
  ASSERT_EQ(::mkfifo(sql_fifo.c_str(), 0644), 0) << std::strerror(errno);
  const Result q = run_timed("query " + db.string() + " " + sql_fifo.string());
  expect_refused(q, "query file '" + sql_fifo.string() + "' is a FIFO", "query FIFO");
}

// ---- 8: NaN/Inf weights, and finite weights whose activations overflow ----------------------

// Overwrites float32 elements of tensor `name` in a safetensors file: element `index`, or all
// of them when index < 0.
void poke_tensor(const fs::path& file, const std::string& name, float value, std::int64_t index) {
  std::string bytes = slurp(file);
  ASSERT_GE(bytes.size(), 8u);
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  const json header = json::parse(bytes.substr(8, header_len));
  ASSERT_TRUE(header.contains(name)) << name;
  ASSERT_EQ(header[name]["dtype"], "F32");
  const std::uint64_t begin = header[name]["data_offsets"][0], end = header[name]["data_offsets"][1];
  const std::size_t base = 8 + header_len;
  for (std::uint64_t off = begin; off < end; off += 4) {
    if (index >= 0 && off != begin + 4 * std::uint64_t(index)) continue;
    std::memcpy(bytes.data() + base + off, &value, 4);
  }
  write_file(file, bytes);
}

TEST(RunReliability, NonFiniteWeightsAndLogitsAreCaseErrorsNamingWhere) {
  const fs::path dir = scratch_dir();
  const fs::path clean = dir / "clean";
  fs::remove_all(clean);
  ASSERT_EQ(run_llmbench("export-weights --model tiny --dtype fp32 -o " + clean.string()).exit_code,
            0);
  struct Case {
    const char* name;
    const char* tensor;
    float value;
    std::int64_t index;
    const char* dtype;
    const char* must_mention;
  } cases[] = {
      {"inf_q_proj", "model.layers.0.self_attn.q_proj.weight", INFINITY, 7, "fp32",
       "tensor 'model.layers.0.self_attn.q_proj.weight' holds +Inf at element 7"},
      {"nan_embedding", "model.embed_tokens.weight", NAN, -1, "fp32",
       "tensor 'model.embed_tokens.weight' holds NaN at element 0"},
      {"nan_lm_head", "lm_head.weight", NAN, -1, "bf16", "tensor 'lm_head.weight' holds NaN"},
      {"fp16_overflow", "model.layers.1.mlp.down_proj.weight", 1e5f, 3, "fp16",
       "beyond the fp16 range"},
      // Finite weights, but the norm's output overflows: found by the checked rerun.
      {"overflowing_norm", "model.layers.1.input_layernorm.weight", 3e38f, -1, "fp32",
       "non-finite logits (NaN in sequence 0): +Inf first appears in layer 1, op attn_norm "
       "(prefill"},
  };
  for (const Case& c : cases) {
    const fs::path ckpt = dir / c.name;
    fs::remove_all(ckpt);
    fs::copy(clean, ckpt, fs::copy_options::recursive);
    poke_tensor(ckpt / "model.safetensors", c.tensor, c.value, c.index);
    const fs::path db = dir / (std::string(c.name) + ".db");
    fs::remove(db);
    const Result r = run_llmbench("run --model " + ckpt.string() + " --dtype " + c.dtype +
                                  " --max-new-tokens 3 --format json" + kQuick + kPeaks +
                                  "--db " + db.string());
    EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.err;
    ASSERT_FALSE(r.out.empty()) << c.name << ": " << r.err;
    const json cases_json = json::parse(r.out)["cases"];
    ASSERT_EQ(cases_json.size(), 1u);
    EXPECT_EQ(cases_json[0]["status"], "error") << c.name;
    const std::string error = cases_json[0]["error"];
    EXPECT_NE(error.find(c.must_mention), std::string::npos) << c.name << ": " << error;
    EXPECT_EQ(sql_int(db.string(), "SELECT COUNT(*) FROM bench_case WHERE status = 'error'"), 1);
  }
  // The clean checkpoint still runs (the checks cost nothing visible).
  const Result ok = run_llmbench("run --model " + clean.string() + " --max-new-tokens 3" + kQuick +
                                 kPeaks + "--db " + (dir / "clean.db").string());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// ---- 11: the memory guard names every part of what does not fit ----------------------------

std::int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoll(line.substr(13)) * 1024;
  return -1;
}

TEST(RunReliability, MemoryGuardMessageShowsTheKvCacheAndActivations) {
  // Weights resident, the case's buffers too large: the parts that do not fit are named.
  const fs::path dir = scratch_dir();
  const Result tiny = run_llmbench("run --model tiny --batch 1000000 --prompt-len 200 "
                                   "--max-new-tokens 1 --format json" +
                                   std::string(" --repeat 1 --warmup 0 --trace off --quiet") +
                                   kPeaks + "--db " + (dir / "tiny.db").string());
  EXPECT_EQ(tiny.exit_code, 1) << tiny.err;
  const std::string msg = json::parse(tiny.out)["cases"][0]["error"];
  EXPECT_NE(msg.find("not enough host memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("GiB: KV cache "), std::string::npos) << msg;
  EXPECT_EQ(msg.find("KV cache 0"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("activations 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("already loaded"), std::string::npos) << msg;

  // llama3-8b fp32 (about 30 GiB of weights), batch 64 x 4096: the KV cache alone is about
  // 64 GiB. Where even the weights do not fit, the refusal used to say "KV cache 0.0000".
  const std::int64_t available = mem_available_bytes();
  if (available < 0 || available >= (std::int64_t(32) << 30))
    GTEST_SKIP() << "llama3-8b's fp32 weights fit in this machine's memory: the "
                    "weights-do-not-fit message is not reachable here (the first half ran)";
  const Result big = run_llmbench("run --model llama3-8b --dtype fp32 --batch 64 --prompt-len 4096 "
                                  "--max-new-tokens 1 --format json --repeat 1 --warmup 0 "
                                  "--trace off --quiet" + kPeaks + "--db " +
                                  (dir / "big.db").string());
  EXPECT_EQ(big.exit_code, 1) << big.err;
  const std::string big_msg = json::parse(big.out)["cases"][0]["error"];
  EXPECT_NE(big_msg.find("weights 29.92 GiB, KV cache 64.02 GiB, activations "),
            std::string::npos) << big_msg;
}

// ---- 12: a full disk on a new --db leaves nothing behind --------------------------------------

// `llmbench <args>` with a file size limit of `kib` KiB (RLIMIT_FSIZE, set by the shell in the
// child, unprivileged) and SIGXFSZ ignored, so a write past it fails with EFBIG as on a full
// disk instead of killing the process.
Result run_with_file_limit(const std::string& args, int kib) {
  const fs::path dir = scratch_dir();
  const std::string cmd = "bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(kib) +
                          " && exec env LLMBENCH_CACHE_DIR=" + (dir / "cache").string() + " " +
                          LLMBENCH_BIN + " " + args + "\" > " + (dir / "out").string() + " 2> " +
                          (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

TEST(RunReliability, AFullDiskOnANewDatabaseLeavesNothing) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "full.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db.string() + suffix);
  if (std::system("bash -c 'ulimit -f 16' 2> /dev/null") != 0)
    GTEST_SKIP() << "bash cannot set a file size limit here (ulimit -f)";
  const Result r = run_with_file_limit("run --model tiny --max-new-tokens 2" + kQuick + kPeaks +
                                           "--db " + db.string(),
                                       16);
  expect_refused(r, "--db '" + db.string() + "': cannot write the database", "full disk");
  EXPECT_NE(r.err.find("the new database was removed, nothing was written"), std::string::npos)
      << r.err;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(db.string() + suffix)) << "left behind: " << db.string() + suffix;
  // With room, the same command works.
  const Result ok = run_llmbench("run --model tiny --max-new-tokens 2" + kQuick + kPeaks +
                                 "--db " + db.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// ---- 13: a disk that fills mid-sweep keeps the cases already stored; --resume finishes --------

TEST(RunReliability, ADiskThatFillsMidSweepKeepsTheStoredCasesAndResumeFinishes) {
  if (std::system("bash -c 'ulimit -f 16' 2> /dev/null") != 0)
    GTEST_SKIP() << "bash cannot set a file size limit here (ulimit -f)";
  const fs::path dir = scratch_dir();
  const std::string sweep = "run --model tiny --max-new-tokens 2" + kQuick + kPeaks;
  // The size of a database holding two of the cases sets the limit: room for about two, of 8.
  const fs::path two = dir / "two.db", db = dir / "filling.db";
  for (const fs::path& p : {two, db})
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(p.string() + suffix);
  ASSERT_EQ(run_llmbench(sweep + "--batch 1,2 --db " + two.string()).exit_code, 0);
  std::uintmax_t bytes = fs::file_size(two);
  if (fs::exists(two.string() + "-wal")) bytes += fs::file_size(two.string() + "-wal");
  const int kib = static_cast<int>(bytes / 1024) + 8;

  // 24 cases: the schema's own pages (every table of every llmbench database) dwarf a tiny case,
  // so the limit must leave room for far fewer cases than the sweep has.
  const std::string batches = "--batch 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24 ";
  const Result full = run_with_file_limit(sweep + batches + "--db " + db.string(), kib);
  expect_refused(full, "--db '" + db.string() + "': cannot write the database", "disk fills");
  const std::size_t of = full.err.find(" of 24 cases are stored; rerun with --resume");
  ASSERT_NE(of, std::string::npos) << full.err;
  const Rows stored = llmbench_test::sql_rows(db.string(), "SELECT batch, status FROM bench_case "
                                                           "ORDER BY batch");
  ASSERT_GE(stored.size(), 1u) << "the limit left room for no case: " << kib << " KiB";
  ASSERT_LE(stored.size(), 23u);
  EXPECT_NE(full.err.find(std::to_string(stored.size()) + " of 24 cases are stored"),
            std::string::npos) << full.err;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i][0], std::to_string(i + 1));  // the sweep's order: nothing skipped
    EXPECT_EQ(stored[i][1], "ok");
  }
  // With room again, --resume runs only the missing cases into the same run.
  const Result resumed = run_llmbench(sweep + batches + "--resume --db " + db.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const Rows all = llmbench_test::sql_rows(
      db.string(), "SELECT COUNT(*), COUNT(DISTINCT batch), COUNT(DISTINCT run_id) FROM bench_case");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], (std::vector<std::string>{"24", "24", "1"}));
}

}  // namespace
