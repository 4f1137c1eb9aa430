// `llmbench import nsys` end to end on exports built from the documented schema
// (nsys_fixture.h): the mapping of each table, both metadata table names, an export without
// NVTX_EVENTS, an export with fewer columns, runtime names without their _vNNNN suffix,
// correlation ids -> flow rows, skip counts, and bad input that leaves the target untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/cli/llmbench_process.h"
#include "tests/import/nsys_fixture.h"
#include "tests/import/sqlite_rows.h"

namespace {

using namespace llmbench_test;

struct Imported {
  fs::path db;
  Result result;
};

Imported import_fixture(const NsysOptions& options = {}) {
  const fs::path dir = scratch_dir();
  const fs::path in = dir / "report.sqlite", db = dir / "trace.db";
  fs::remove(db);
  make_nsys_export(in, options);
  return {db, run_llmbench("import nsys " + in.string() + " --db " + db.string(), dir / "run")};
}

std::map<std::string, std::string> args_of(const fs::path& db, const std::string& slice_name) {
  std::map<std::string, std::string> out;
  for (const auto& r : sql_rows(db, "SELECT a.key, COALESCE(a.int_value, a.string_value, "
                                    "a.real_value) FROM slice s JOIN args a USING (arg_set_id) "
                                    "WHERE s.name = '" + slice_name + "'"))
    out[r[0]] = r[1];
  return out;
}

TEST(NsysImport, MapsRangesApiCallsKernelsCopiesAndSets) {
  const auto [db, r] = import_fixture();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as import 1"), std::string::npos) << r.out;
  const std::string d = db.string();

  // Events by category: 4 NVTX ranges (3 push/pop + 1 start/end), 1 mark, 5 runtime calls,
  // 4 kernels, 1 memcpy, 1 memset.
  const Rows cats = sql_rows(d, "SELECT category, COUNT(*) FROM slice GROUP BY 1 ORDER BY 1");
  EXPECT_EQ(cats, (Rows{{"cuda_runtime", "5"}, {"gpu_memcpy", "1"}, {"gpu_memset", "1"},
                        {"kernel", "4"}, {"nvtx", "4"}, {"nvtx_mark", "1"}}));

  // NVTX text, textId through StringIds; nesting on the thread, with the API calls inside.
  const Rows ranges = sql_rows(
      d, "SELECT s.name, s.ts, s.dur, s.depth, p.name FROM slice s LEFT JOIN slice p ON "
         "p.id = s.parent_id WHERE s.category IN ('nvtx', 'nvtx_mark') ORDER BY s.ts, s.depth");
  EXPECT_EQ(ranges, (Rows{{"step", "1000", "9000", "0", "NULL"},
                          {"marker", "1500", "0", "1", "step"},
                          {"registered_range", "2000", "4000", "1", "step"},
                          {"async_io", "3000", "9000", "0", "NULL"},
                          {"tail", "6500", "2500", "1", "step"}}));
  EXPECT_EQ(args_of(db, "registered_range"),
            (std::map<std::string, std::string>{{"domain", "llmbench"}, {"payload", "3"}}));
  EXPECT_EQ(args_of(db, "step"),
            (std::map<std::string, std::string>{{"domain", "llmbench"}, {"color", "4278190335"}}));
  EXPECT_EQ(args_of(db, "async_io")["end_tid"], "102");

  // Runtime names lose the _vNNNN suffix and nest in the ranges they were called in.
  const Rows api = sql_rows(d, "SELECT s.name, s.correlation_id, p.name FROM slice s JOIN slice p "
                               "ON p.id = s.parent_id WHERE s.category = 'cuda_runtime' "
                               "ORDER BY s.ts");
  EXPECT_EQ(api, (Rows{{"cudaLaunchKernel", "10", "step"},
                       {"cudaLaunchKernel", "11", "registered_range"},
                       {"cudaLaunchKernel", "12", "registered_range"},
                       {"cudaMemcpyAsync", "13", "tail"},
                       {"cudaDeviceSynchronize", "15", "tail"}}));

  // Processes, threads and tracks: pid/tid decoded from the global ids, names from PROCESSES
  // and ThreadNames; one GPU track per stream.
  EXPECT_EQ(sql_rows(d, "SELECT pid, name FROM process"), (Rows{{"100", "python3"}}));
  EXPECT_EQ(sql_rows(d, "SELECT tid, name FROM thread ORDER BY tid"),
            (Rows{{"101", "ThreadMain"}}));
  EXPECT_EQ(sql_rows(d, "SELECT name, device_id, stream_id FROM gpu_track ORDER BY stream_id"),
            (Rows{{"GPU 0 (NVIDIA H100) stream 7", "0", "7"},
                  {"GPU 0 (NVIDIA H100) stream 8", "0", "8"}}));
  EXPECT_EQ(sql_rows(d, "SELECT name FROM thread_track"), (Rows{{"ThreadMain"}}));
  EXPECT_EQ(sql_int(d, "SELECT COUNT(*) FROM track WHERE import_id = 1"), 4);

  // Kernels: demangled names, launch geometry and registers as args.
  const Rows kernels = sql_rows(d, "SELECT name, ts, dur, correlation_id FROM slice WHERE "
                                   "category = 'kernel' ORDER BY ts");
  EXPECT_EQ(kernels, (Rows{{"relu_kernel", "1300", "100", "10"},
                           {"gemm_kernel<float>(float*)", "3000", "2000", "11"},
                           {"other_kernel", "3500", "1000", "16"},
                           {"relu_kernel", "5200", "400", "12"}}));
  const auto gemm = args_of(db, "gemm_kernel<float>(float*)");
  EXPECT_EQ(gemm.at("grid.x"), "4");
  EXPECT_EQ(gemm.at("grid.y"), "2");
  EXPECT_EQ(gemm.at("block.x"), "128");
  EXPECT_EQ(gemm.at("registers_per_thread"), "32");
  EXPECT_EQ(gemm.at("short_name"), "gemm_kernel");
  EXPECT_EQ(gemm.at("static_shared_memory_bytes"), "1024");
  EXPECT_EQ(gemm.at("stream"), "7");

  // Copies and sets: kind label from ENUM_CUDA_MEMCPY_OPER, bytes in the bytes column.
  EXPECT_EQ(sql_rows(d, "SELECT name, bytes FROM slice WHERE category LIKE 'gpu_mem%' ORDER BY ts"),
            (Rows{{"[CUDA memcpy Device-to-Host]", "4096"}, {"[CUDA memset]", "256"}}));
  EXPECT_EQ(args_of(db, "[CUDA memcpy Device-to-Host]").at("src_kind"), "Pinned");

  // Correlation ids joined within the process: one flow per launched activity.
  const Rows flows = sql_rows(
      d, "SELECT o.name, i.name, o.correlation_id FROM flow f JOIN slice o ON o.id = f.slice_out "
         "JOIN slice i ON i.id = f.slice_in ORDER BY o.correlation_id");
  EXPECT_EQ(flows, (Rows{{"cudaLaunchKernel", "relu_kernel", "10"},
                         {"cudaLaunchKernel", "gemm_kernel<float>(float*)", "11"},
                         {"cudaLaunchKernel", "relu_kernel", "12"},
                         {"cudaMemcpyAsync", "[CUDA memcpy Device-to-Host]", "13"}}));

  // The import row: counts, skip counts, metadata and version.
  const Rows imp = sql_rows(d, "SELECT format, events, flows, source_version, "
                               "json_extract(skipped, '$.\"NVTX_EVENTS: range without an end\"'), "
                               "json_extract(skipped, '$.\"NVTX_EVENTS: end before start (negative "
                               "duration)\"'), json_extract(metadata, "
                               "'$.META_DATA_EXPORT.NSYS_VERSION') FROM import");
  EXPECT_EQ(imp, (Rows{{"nsys", "16", "4", "export schema 3.11.1", "1", "1", "2024.2.1"}}));
  // Skips are one line on stderr.
  EXPECT_NE(r.err.find("import: skipped 2 input records"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(NsysImport, ReadsTheOlderMetadataTableName) {
  NsysOptions o;
  o.meta_table = "EXPORT_META_DATA";
  const auto [db, r] = import_fixture(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sql_rows(db, "SELECT source_version, json_extract(metadata, "
                         "'$.EXPORT_META_DATA.NSYS_VERSION') FROM import"),
            (Rows{{"export schema 3.11.1", "2024.2.1"}}));
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM slice"), 16);
}

TEST(NsysImport, ImportsAnExportWithoutNvtxEvents) {
  NsysOptions o;
  o.nvtx = false;
  const auto [db, r] = import_fixture(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // nothing skipped
  EXPECT_NE(r.out.find("no NVTX_EVENTS table"), std::string::npos) << r.out;
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM slice WHERE category LIKE 'nvtx%'"), 0);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM slice WHERE category = 'kernel'"), 4);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM flow"), 4);
}

TEST(NsysImport, ReadsOtherExportVersionsAsFarAsTheirColumnsAllow) {
  NsysOptions o;
  o.minimal_kernel_columns = true;  // no contextId, globalPid, demangledName, grid, block...
  o.enums = false;                  // memcpy kinds from CUPTI's numbering instead
  const auto [db, r] = import_fixture(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sql_rows(db, "SELECT name FROM slice WHERE category = 'kernel' ORDER BY ts"),
            (Rows{{"relu_kernel"}, {"gemm_kernel"}, {"other_kernel"}, {"relu_kernel"}}));
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM slice WHERE name = '[CUDA memcpy Device-to-Host]'"),
            1);
  // Without globalPid the kernels belong to process 0, so only the memcpy (with a pid) links.
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM flow"), 1);
}

TEST(NsysImport, ImportingTwiceMakesTwoImportsWithDistinctIds) {
  const fs::path dir = scratch_dir();
  const fs::path in = dir / "report.sqlite", db = dir / "twice.db";
  fs::remove(db);
  make_nsys_export(in);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run_llmbench("import nsys " + in.string() + " --db " + db.string()).exit_code, 0);
  EXPECT_EQ(sql_rows(db, "SELECT id, events FROM import"), (Rows{{"1", "16"}, {"2", "16"}}));
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM event"), 32);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(DISTINCT t.import_id) FROM event e JOIN track t "
                        "ON t.id = e.track_id"), 2);
  // Flows and parents stay inside their own import.
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM flow f JOIN event o ON o.id = f.slice_out "
                        "JOIN event i ON i.id = f.slice_in JOIN track a ON a.id = o.track_id "
                        "JOIN track b ON b.id = i.track_id WHERE a.import_id <> b.import_id"), 0);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM event c JOIN event p ON p.id = c.parent_id "
                        "JOIN track a ON a.id = c.track_id JOIN track b ON b.id = p.track_id "
                        "WHERE a.import_id <> b.import_id"), 0);
}

std::string file_bytes(const fs::path& p) { return slurp(p); }

TEST(NsysImport, BadInputIsOneErrorLineAndLeavesTheTargetUnchanged) {
  const fs::path dir = scratch_dir();
  const fs::path good = dir / "report.sqlite", db = dir / "target.db";
  fs::remove(db);
  make_nsys_export(good);
  ASSERT_EQ(run_llmbench("import nsys " + good.string() + " --db " + db.string()).exit_code, 0);
  const std::string before = file_bytes(db);

  const fs::path not_nsys = dir / "other.sqlite", text = dir / "notes.txt";
  fs::remove(not_nsys);
  sql_exec(not_nsys.string(), "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
  write_file(text, "this is not a database\n");
  const struct {
    fs::path file;
    const char* says;
  } cases[] = {{not_nsys, "is not an Nsight Systems SQLite export"},
               {text, "is not an SQLite file"},
               {dir / "missing.sqlite", "does not exist"},
               {db, "is not an Nsight Systems SQLite export"}};  // an llmbench database
  for (const auto& c : cases) {
    const Result r = run_llmbench("import nsys " + c.file.string() + " --db " + db.string());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.file.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(file_bytes(db), before) << "target changed by " << c.file;
  }
  // Into a database that did not exist: it is not created.
  const fs::path fresh = dir / "fresh.db";
  EXPECT_EQ(run_llmbench("import nsys " + not_nsys.string() + " --db " + fresh.string()).exit_code,
            2);
  EXPECT_FALSE(fs::exists(fresh));
  // A missing subcommand or file is a usage error.
  EXPECT_EQ(run_llmbench("import").exit_code, 2);
  EXPECT_EQ(run_llmbench("import nsys --db " + db.string()).exit_code, 2);
}

TEST(NsysImport, AFailureWhileWritingRollsBackTheWholeImport) {
  const fs::path dir = scratch_dir();
  const fs::path in = dir / "report.sqlite", db = dir / "target.db";
  fs::remove(db);
  make_nsys_export(in);
  ASSERT_EQ(run_llmbench("import nsys " + in.string() + " --db " + db.string()).exit_code, 0);
  // Writing the flows fails after the import row, processes, tracks and events went in.
  sql_exec(db.string(), "CREATE TRIGGER no_flows BEFORE INSERT ON flow "
                        "BEGIN SELECT RAISE(ABORT, 'flow insert refused'); END;");
  const Result r = run_llmbench("import nsys " + in.string() + " --db " + db.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("flow insert refused"), std::string::npos) << r.err;
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM import"), 1);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM event"), 16);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM process"), 1);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM arg"),
            sql_int(db, "SELECT COUNT(*) FROM arg a JOIN event e USING (arg_set_id)"));
}

}  // namespace
