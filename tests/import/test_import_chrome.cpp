// `llmbench import chrome` end to end: a Kineto-shaped trace (chrome_fixture.h) with every
// phase the importer reads, the bare-array form, gzip, malformed input (exit 2, target
// unchanged), skip counts, and the trace-processor compatibility of a window query over a
// record_function range holding nested aten:: ops with fractional microsecond timestamps.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "tests/import/chrome_fixture.h"
#include "tests/cli/llmbench_process.h"
#include "tests/import/sqlite_rows.h"

namespace {

using namespace llmbench_test;

void write_gz(const fs::path& p, const std::string& data) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_TRUE(f);
  ASSERT_EQ(gzwrite(f, data.data(), unsigned(data.size())), int(data.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

Result import_json(const std::string& text, const fs::path& db, const std::string& name,
                   bool gz = false) {
  const fs::path in = scratch_dir() / name;
  if (gz) write_gz(in, text); else write_file(in, text);
  return run_llmbench("import chrome " + in.string() + " --db " + db.string(),
                      scratch_dir() / ("run_" + name));
}

std::string arg(const fs::path& db, const std::string& slice, const std::string& key) {
  const Rows r = sql_rows(db, "SELECT COALESCE(a.int_value, a.string_value, a.real_value) "
                              "FROM slice s JOIN args a USING (arg_set_id) WHERE s.name = '" +
                                  slice + "' AND a.key = '" + key + "'");
  return r.empty() ? "(none)" : r[0][0];
}

TEST(ChromeImport, KinetoTraceMapsEveryPhase) {
  const fs::path db = scratch_dir() / "kineto.db";
  fs::remove(db);
  const Result r = import_json(kineto_trace().dump(), db, "kineto.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string d = db.string();

  // 16 X + 2 matched B/E + 3 instants; 3 ac2g flows + 1 bind_id flow; 3 counter values.
  EXPECT_EQ(sql_rows(d, "SELECT events, flows, counters FROM import"),
            (Rows{{"21", "4", "3"}}));
  // Microseconds to integer ns, rounded to nearest; categories kept.
  EXPECT_EQ(sql_rows(d, "SELECT ts, dur, category FROM slice WHERE name = 'aten::t'"),
            (Rows{{"101601", "1000", "cpu_op"}}));
  EXPECT_EQ(sql_rows(d, "SELECT ts, dur FROM slice WHERE category = 'user_annotation'"),
            (Rows{{"100000", "60000"}}));
  EXPECT_EQ(sql_rows(d, "SELECT dur, correlation_id FROM slice WHERE name = 'sgemm_128x64'"),
            (Rows{{"12345", "42"}}));
  EXPECT_EQ(sql_rows(d, "SELECT bytes FROM slice WHERE category = 'gpu_memcpy'"),
            (Rows{{"4096"}}));
  // Depth and parents per track.
  const Rows chain = sql_rows(
      d, "WITH RECURSIVE up(id, name, depth) AS (SELECT id, name, depth FROM slice WHERE "
         "correlation_id = 42 AND category = 'cuda_runtime' UNION ALL SELECT p.id, p.name, "
         "p.depth FROM up JOIN slice c ON c.id = up.id JOIN slice p ON p.id = c.parent_id) "
         "SELECT name, depth FROM up");
  EXPECT_EQ(chain, (Rows{{"cudaLaunchKernel", "3"}, {"aten::addmm", "2"},
                         {"aten::linear", "1"}, {"my_range", "0"}}));
  EXPECT_EQ(sql_rows(d, "SELECT s.depth, p.name FROM slice s JOIN slice p ON p.id = s.parent_id "
                        "WHERE s.name = 'sgemm_128x64'"),
            (Rows{{"1", "my_range"}}));  // inside the gpu_user_annotation on its stream
  // A slice that overlaps its would-be parent partially goes to an overlap track.
  EXPECT_EQ(sql_rows(d, "SELECT t.name, s.depth FROM slice s JOIN track t ON t.id = s.track_id "
                        "WHERE s.name = 'aten::straddle'"),
            (Rows{{"thread 1235 (python3) (overlap 1)", "0"}}));
  // Tracks: names from M events; the stream is a GPU track on its thread.
  EXPECT_EQ(sql_rows(d, "SELECT name, device_id, stream_id FROM gpu_track"),
            (Rows{{"stream 7", "0", "7"}}));
  EXPECT_EQ(sql_rows(d, "SELECT p.pid, p.name FROM process p ORDER BY p.pid"),
            (Rows{{"0", "GPU 0"}, {"1234", "python3"}}));
  EXPECT_EQ(sql_int(d, "SELECT COUNT(*) FROM thread_track WHERE name = 'stream 7'"), 1);
  // Args in the args table with trace processor's keys.
  EXPECT_EQ(arg(db, "sgemm_128x64", "args.grid[0]"), "4");
  EXPECT_EQ(sql_rows(d, "SELECT DISTINCT flat_key FROM args WHERE key = 'args.grid[1]'"),
            (Rows{{"args.grid"}}));
  EXPECT_EQ(arg(db, "aten::linear", "args.Input Dims[1][0]"), "32");
  EXPECT_EQ(arg(db, "my_range", "args.External id"), "1");
  // Flows: ac2g from each launch to its device op, and the bind_id pair.
  const Rows flows = sql_rows(
      d, "SELECT o.name, i.name FROM flow f JOIN slice o ON o.id = f.slice_out JOIN slice i ON "
         "i.id = f.slice_in ORDER BY i.ts");
  EXPECT_EQ(flows, (Rows{{"cudaLaunchKernel", "sgemm_128x64"},
                         {"cudaLaunchKernel", "relu_kernel"},
                         {"cudaMemcpyAsync", "Memcpy DtoH (Device -> Pageable)"},
                         {"producer", "consumer"}}));
  // B/E: matched per thread, E args merged; instants at each scope; counters per key.
  EXPECT_EQ(sql_rows(d, "SELECT name, ts, dur, depth, category FROM slice WHERE name LIKE 'b_%' "
                        "ORDER BY ts"),
            (Rows{{"b_outer", "200000", "10000", "0", "user"},
                  {"b_inner", "201000", "4000", "1", "NULL"}}));
  EXPECT_EQ(arg(db, "b_inner", "args.r"), "2");
  EXPECT_EQ(arg(db, "b_inner", "args.a"), "1");
  EXPECT_EQ(sql_rows(d, "SELECT s.name, t.type FROM slice s JOIN track t ON t.id = s.track_id "
                        "WHERE s.dur = 0 ORDER BY s.ts"),
            (Rows{{"mark", "thread"}, {"global_mark", "global"}, {"process_mark", "process"}}));
  EXPECT_EQ(sql_rows(d, "SELECT t.name, c.ts, c.value FROM counter c JOIN counter_track t ON "
                        "t.id = c.track_id ORDER BY t.name, c.ts"),
            (Rows{{"GPU Memory allocated", "100000", "1024.0"},
                  {"GPU Memory allocated", "150000", "4096.0"},
                  {"GPU Memory reserved", "100000", "2048.0"}}));
  // Skip counts: stored with the import and printed as one line.
  EXPECT_EQ(sql_rows(d, "SELECT key, value FROM import, json_each(import.skipped) ORDER BY key"),
            (Rows{{"B without a matching E", "1"},
                  {"E without a matching B", "1"},
                  {"event without a numeric ts", "1"},
                  {"negative duration", "1"},
                  {"unsupported phase 'P'", "1"}}));
  EXPECT_NE(r.err.find("import: skipped 5 input records"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // The object's other keys are kept as the import's metadata.
  EXPECT_EQ(sql_rows(d, "SELECT format, source_version, json_extract(metadata, "
                        "'$.baseTimeNanoseconds'), json_extract(metadata, '$.displayTimeUnit') "
                        "FROM import"),
            (Rows{{"chrome", "object, schemaVersion 1", "1700000000000000000", "ms"}}));
}

TEST(ChromeImport, BareArrayAndGzipGiveTheSameEvents) {
  const json trace = kineto_trace();
  const fs::path a = scratch_dir() / "object.db", b = scratch_dir() / "array.db",
                 c = scratch_dir() / "gz.db";
  for (const auto& p : {a, b, c}) fs::remove(p);
  ASSERT_EQ(import_json(trace.dump(), a, "object.json").exit_code, 0);
  ASSERT_EQ(import_json(trace["traceEvents"].dump(), b, "array.json").exit_code, 0);
  ASSERT_EQ(import_json(trace.dump(), c, "trace.json.gz", /*gz=*/true).exit_code, 0);
  const std::string q = "SELECT ts, dur, name, category, depth FROM slice ORDER BY ts, name";
  EXPECT_EQ(sql_rows(a, q), sql_rows(b, q));
  EXPECT_EQ(sql_rows(a, q), sql_rows(c, q));
  EXPECT_EQ(sql_rows(b, "SELECT source_version FROM import"), (Rows{{"array"}}));
}

TEST(ChromeImport, OlderPyTorchShapeWithoutCatAndWithStringPids) {
  // What torch 1.13 without Kineto writes: no cat, "pid": "CPU functions", integer us.
  const json trace = json::array({
      {{"name", "outer"}, {"ph", "X"}, {"ts", 10}, {"dur", 100}, {"tid", 1},
       {"pid", "CPU functions"}, {"args", json::object()}},
      {{"name", "aten::mm"}, {"ph", "X"}, {"ts", 20}, {"dur", 30}, {"tid", 1},
       {"pid", "CPU functions"}, {"args", json::object()}},
  });
  const fs::path db = scratch_dir() / "old.db";
  fs::remove(db);
  ASSERT_EQ(import_json(trace.dump(), db, "old.json").exit_code, 0);
  EXPECT_EQ(sql_rows(db, "SELECT s.name, s.category, s.depth, p.name FROM slice s JOIN track t "
                         "ON t.id = s.track_id JOIN thread th USING (utid) JOIN process p "
                         "USING (upid) ORDER BY s.ts"),
            (Rows{{"outer", "NULL", "0", "CPU functions"},
                  {"aten::mm", "NULL", "1", "CPU functions"}}));
}

TEST(ChromeImport, MalformedInputIsOneErrorLineAndLeavesTheTargetUnchanged) {
  const fs::path db = scratch_dir() / "target.db";
  fs::remove(db);
  ASSERT_EQ(import_json(kineto_trace().dump(), db, "good.json").exit_code, 0);
  const std::string before = slurp(db);
  const std::string good = kineto_trace().dump();
  const struct {
    std::string name, text;
    bool gz;
    const char* says;
  } cases[] = {
      {"truncated.json", good.substr(0, good.size() / 2), false, "invalid JSON"},
      {"truncated.json.gz", "", true, "gzip"},  // filled below
      {"empty.json", "", false, "invalid JSON"},
      {"scalar.json", "42", false, "expected a JSON array of events"},
      {"no_events.json", R"({"displayTimeUnit": "ns"})", false, "no traceEvents array"},
      {"not_array.json", R"({"traceEvents": {"ph": "X"}})", false, "no traceEvents array"},
      {"garbage.json", "\x01\x02 not json", false, "invalid JSON"},
  };
  for (const auto& c : cases) {
    const fs::path in = scratch_dir() / c.name;
    if (c.gz) {
      write_gz(in, good);
      const std::string bytes = slurp(in);
      write_file(in, bytes.substr(0, bytes.size() / 2));  // cut the compressed stream
    } else {
      write_file(in, c.text);
    }
    const Result r = run_llmbench("import chrome " + in.string() + " --db " + db.string());
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: chrome trace '" + in.string() + "'", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(slurp(db), before) << "target changed by " << c.name;
  }
  const Result missing = run_llmbench("import chrome " + (scratch_dir() / "nope.json").string() +
                                      " --db " + db.string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  // A database that is not SQLite is refused before anything is written.
  const fs::path not_db = scratch_dir() / "not.db";
  write_file(not_db, "plain text");
  const Result bad_db = import_json(good, not_db, "good2.json");
  EXPECT_EQ(bad_db.exit_code, 2) << bad_db.err;
  EXPECT_EQ(slurp(not_db), "plain text");
}

// 20,000 nested arrays in one event's args (40 KB) overflowed the stack while flattening them
// (exit 139): the nesting is bounded while parsing and the file refused with one line.
TEST(ChromeImport, DeeplyNestedJsonIsRefusedNotACrash) {
  const fs::path db = scratch_dir() / "target.db";
  fs::remove(db);
  ASSERT_EQ(import_json(kineto_trace().dump(), db, "good.json").exit_code, 0);
  const std::string before = slurp(db);
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"nested_args.json",
            R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "args": {"x": )" +
                std::string(20000, '[') + std::string(20000, ']') + "}}]}"},
           {"nested_name.json", R"([{"ph": "X", "ts": 1, "dur": 2, "name": )" +
                                    std::string(20000, '[') + std::string(20000, ']') + "}]"},
           {"nested_metadata.json", R"({"traceEvents": [], "meta": )" +
                                        std::string(200000, '[') + "}"}}) {
    const fs::path in = scratch_dir() / name;
    write_file(in, text);
    const Result r = run_llmbench("import chrome " + in.string() + " --db " + db.string());
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: chrome trace '" + in.string() + "'", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("nested deeper than 128 levels"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(slurp(db), before) << name;
  }
  // Nesting up to the limit imports (the event's args flatten into one arg).
  std::string args = "1";
  for (int i = 0; i < 120; ++i) args = "[" + args + "]";
  const Result ok = import_json(R"({"traceEvents": [{"ph": "X", "name": "deep", "ts": 1, "dur": 2, )"
                                R"("args": {"x": )" + args + "}}]}",
                                db, "deep_ok.json");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(sql_int(db.string(), "SELECT COUNT(*) FROM slice WHERE name = 'deep'"), 1);
}

// A full disk (a file size limit in the child, SIGXFSZ ignored: unprivileged) while a new
// database is written: one line, exit 2, and no database or side file left behind.
TEST(ChromeImport, AFullDiskLeavesNoDatabase) {
  const fs::path dir = scratch_dir();
  const fs::path in = dir / "big.json", db = dir / "full.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db.string() + suffix);
  json events = json::array();
  for (int i = 0; i < 3000; ++i)
    events.push_back({{"ph", "X"}, {"name", "op" + std::to_string(i)}, {"ts", i}, {"dur", 1},
                      {"pid", 1}, {"tid", 1}});
  write_file(in, events.dump());
  if (std::system("bash -c 'ulimit -f 16' 2> /dev/null") != 0)
    GTEST_SKIP() << "bash cannot set a file size limit here (ulimit -f)";
  const std::string cmd = "bash -c \"trap '' XFSZ; ulimit -f 16 && exec " LLMBENCH_BIN
                          " import chrome " + in.string() + " --db " + db.string() + "\" > " +
                          (dir / "out").string() + " 2> " + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string err = slurp(dir / "err");
  EXPECT_EQ(err.rfind("error: --db '" + db.string() + "': cannot write the import", 0), 0u) << err;
  EXPECT_NE(err.find("nothing was created"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(db.string() + suffix)) << db.string() + suffix;
}

// Times at the ends of the int64 ns range: a duration that would carry the end past it, and a
// B/E pair whose difference does not fit, are skipped and counted; nothing overflows.
TEST(ChromeImport, EventsEndingBeyondTheInt64RangeAreSkipped) {
  const fs::path db = scratch_dir() / "target.db";
  fs::remove(db);
  const Result r = import_json(
      R"([{"ph": "X", "name": "far", "ts": 9.1e15, "dur": 9.1e15, "pid": 1, "tid": 1},)"
      R"( {"ph": "B", "name": "wide", "ts": -9.1e15, "pid": 1, "tid": 2},)"
      R"( {"ph": "E", "ts": 9.1e15, "pid": 1, "tid": 2},)"
      R"( {"ph": "X", "name": "fine", "ts": 9.1e15, "dur": 1, "pid": 1, "tid": 1}])",
      db, "extreme.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sql_rows(db.string(), "SELECT name FROM slice"), (Rows{{"fine"}}));
  EXPECT_EQ(sql_rows(db.string(),
                     "SELECT json_extract(skipped, '$.\"end beyond the int64 ns range\"'), "
                     "json_extract(skipped, '$.\"interval longer than the int64 ns range\"') "
                     "FROM import"),
            (Rows{{"1", "1"}}));
}

// The trace-issue question in trace processor's SQL, on a record_function range with nested
// aten:: ops whose timestamps have sub-ns fractions: the counts and sums must equal those
// computed here from the JSON the way trace processor converts it (us -> ns: integers times
// 1000, reals rounded to nearest, ts and dur independently).
TEST(ChromeImport, WindowQueryMatchesTraceProcessorNumbers) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len(5000, 40000), gap(0, 3000), frac(0, 9999);
  const char* ops[] = {"aten::linear", "aten::addmm", "aten::relu", "aten::t", "aten::copy_"};
  auto us = [&](long long tenth_ns) { return double(tenth_ns) / 10000.0; };  // 0.1 ns steps
  json ev = json::array();
  const long long r0 = 1000000LL * 10 + frac(rng), r1 = r0 + 3000000LL * 10;  // in 0.1 ns
  ev.push_back(x_event("user_annotation", "my_range", 1, 1, us(r0), us(r1 - r0)));
  long long t = r0 - 200000;  // one op starts before the range
  while (t < r1 + 400000) {   // and some after it
    const long long d = len(rng) * 10LL + frac(rng) % 10;
    const std::string name = ops[rng() % 5];
    if (!(t < r0 && t + d > r0) && !(t < r1 && t + d > r1)) {  // nest or stay outside
      ev.push_back(x_event("cpu_op", name, 1, 1, us(t), us(d)));
      // A nested child with its own fractional times.
      const long long ct = t + d / 4 + frac(rng) % 7, cd = d / 3 + frac(rng) % 9;
      ev.push_back(x_event("cpu_op", std::string(ops[rng() % 5]), 1, 1, us(ct), us(cd)));
      ev.push_back(x_event("cpu_op", "not_aten", 1, 1, us(ct + cd + 1), us(10)));
    }
    t += d + gap(rng) * 10LL + frac(rng) % 10;
  }
  // Independent expectation: trace processor's conversion, then the window predicate.
  auto ns = [](const json& v) { return std::llround(v.get<double>() * 1000.0); };
  const long long w0 = ns(ev[0]["ts"]), w1 = w0 + ns(ev[0]["dur"]);
  std::map<std::string, std::pair<long long, long long>> expected;  // name -> (n, sum dur)
  for (const auto& e : ev) {
    const std::string name = e["name"];
    const long long ts = ns(e["ts"]), dur = ns(e["dur"]);
    if (name.rfind("aten::", 0) == 0 && ts >= w0 && ts + dur <= w1) {
      ++expected[name].first;
      expected[name].second += dur;
    }
  }
  ASSERT_GE(expected.size(), 3u);

  const fs::path db = scratch_dir() / "window.db";
  fs::remove(db);
  ASSERT_EQ(import_json(json{{"traceEvents", ev}}.dump(), db, "window.json").exit_code, 0);
  const Rows got = sql_rows(
      db, "SELECT name, COUNT(*), SUM(dur) FROM slice "
          "WHERE ts >= (SELECT ts FROM slice WHERE name = 'my_range') "
          "AND ts + dur <= (SELECT ts + dur FROM slice WHERE name = 'my_range') "
          "AND name LIKE 'aten::%' GROUP BY name ORDER BY name");
  Rows want;
  for (const auto& [name, v] : expected)
    want.push_back({name, std::to_string(v.first), std::to_string(v.second)});
  EXPECT_EQ(got, want);
}

}  // namespace
