// A deterministic fuzz-style test of the Nsight Systems export reader: the fixture export
// (tests/import/nsys_fixture.h) is mutated at random with SQL (a cell set to NULL, text, a blob,
// a real or an int64 extreme; rows with start/end at the ends of the int64 range; a table or a
// column dropped; enum and string tables rewritten) or by damaging the file's bytes, and read
// with read_nsys_export, nesting and flow linking included. Each outcome must be success or
// llmbench::Error, and every slice read has dur >= 0 with ts + dur inside int64: never a
// crash, a sanitizer report (UBSan: no signed overflow) or another exception. ctest runs it
// plain and against sanitized copies of llmbench_trace_io and llmbench_store.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/fuzz/fuzz_rng.h"
#include "tests/fuzz/fuzz_tally.h"
#include "tests/import/nsys_fixture.h"
#include "tools/trace_io/import_nsys.h"

namespace {

using namespace llmbench_test;
namespace fs = std::filesystem;

constexpr int kIterations = 600;
constexpr std::uint64_t kSeed = 0x4575;

enum class Mutation { kCell, kExtremeRow, kDropTable, kDropColumn, kEnums, kFileBytes, kCount };
const char* const kNames[] = {"cell", "extreme row", "drop table", "drop column", "enums",
                              "file bytes"};

const std::vector<std::string> kTables = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "StringIds", "ThreadNames", "PROCESSES",
    "TARGET_INFO_GPU", "ENUM_NSYS_EVENT_TYPE", "ENUM_CUDA_MEMCPY_OPER", "META_DATA_EXPORT"};
const std::vector<std::string> kColumns = {
    "start", "end", "globalTid", "globalPid", "correlationId", "nameId", "textId", "text",
    "eventType", "deviceId", "streamId", "copyKind", "bytes", "domainId", "id", "value", "name",
    "demangledName", "shortName", "gridX", "srcKind", "memKind", "rangeId", "jsonTextId"};
const std::vector<std::string> kValues = {
    "NULL", "-9223372036854775808", "9223372036854775807", "-1", "0", "'text'", "x'00ff'",
    "1e308", "-1e308", "0.5", "''", "4294967296", "16777216", "72057594037927936"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `sql` on `path`, ignoring errors (a mutation that does not apply is a no-op).
void try_sql(const fs::path& path, const std::string& sql) {
  sqlite3* h = nullptr;
  if (sqlite3_open(path.c_str(), &h) == SQLITE_OK)
    sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(h);
}

std::string mutation_sql(FuzzRng& rng, Mutation kind) {
  const std::string& table = rng.pick(kTables);
  const std::string& column = rng.pick(kColumns);
  const std::string& value = rng.pick(kValues);
  const std::string gp = std::to_string(kGlobalPid), a = std::to_string(kGlobalTidA);
  const std::string lo = "-9223372036854775808", hi = "9223372036854775807";
  switch (kind) {
    case Mutation::kCell:
      return "UPDATE \"" + table + "\" SET \"" + column + "\" = " + value +
             " WHERE rowid = (SELECT rowid FROM \"" + table + "\" LIMIT 1 OFFSET " +
             std::to_string(rng.below(4)) + ")";
    case Mutation::kExtremeRow: {
      const std::string start = rng.pick(std::vector<std::string>{lo, "-1", "0", hi});
      const std::string end = rng.pick(std::vector<std::string>{lo, "0", "1", hi});
      switch (rng.below(4)) {
        case 0:
          return "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
                 "streamId, correlationId, globalPid, demangledName, shortName, "
                 "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                 "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                 "localMemoryTotal, gridId) VALUES (" + start + ", " + end + ", 0, 1, 7, 11, " +
                 gp + ", 5, 5, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 99)";
        case 1:
          return "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
                 "correlationId, nameId, returnValue) VALUES (" + start + ", " + end + ", 0, " +
                 a + ", 11, 1, 0)";
        case 2:
          return "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid) VALUES (" + start +
                 ", " + end + ", " + rng.pick(std::vector<std::string>{"34", "59", "60"}) +
                 ", " + a + ")";
        default:
          return "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                 "streamId, correlationId, globalPid, bytes, copyKind) VALUES (" + start + ", " +
                 end + ", 0, 1, 7, 13, " + gp + ", " + value + ", " + value + ")";
      }
    }
    case Mutation::kDropTable: return "DROP TABLE \"" + table + "\"";
    case Mutation::kDropColumn:
      return "ALTER TABLE \"" + table + "\" DROP COLUMN \"" + column + "\"";
    case Mutation::kEnums:
      return rng.percent(50)
                 ? "UPDATE ENUM_NSYS_EVENT_TYPE SET id = " + value + " WHERE name LIKE 'Nvtx%'"
                 : "INSERT INTO StringIds VALUES (" + value + ", " + value + ")";
    default: return "";
  }
}

TEST(FuzzNsysImport, MutatedExportsImportOrFailCleanly) {
  const fs::path dir = fs::path(LLMBENCH_TEST_SCRATCH) / LLMBENCH_FUZZ_GROUP;
  fs::create_directories(dir);
  const fs::path pristine = dir / "pristine.sqlite", file = dir / "export.sqlite";
  make_nsys_export(pristine);
  const std::string pristine_bytes = read_file(pristine);
  FuzzRng rng(kSeed, "nsys");
  FuzzTally<Mutation> tally;
  for (int iter = 0; iter < kIterations; ++iter) {
    const auto kind = Mutation(rng.below(std::uint64_t(Mutation::kCount)));
    std::string bytes = pristine_bytes;
    if (kind == Mutation::kFileBytes) {
      for (int i = 1 + int(rng.below(16)); i > 0; --i) {
        // Mostly in the first pages (header, schema), where damage changes the structure.
        const std::size_t span = rng.percent(70) ? std::min<std::size_t>(bytes.size(), 8192)
                                                 : bytes.size();
        bytes[rng.below(span)] = char(rng.below(256));
      }
      if (rng.percent(20)) bytes.resize(rng.below(bytes.size()));
    }
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    if (kind != Mutation::kFileBytes)
      for (int i = 1 + int(rng.below(3)); i > 0; --i) try_sql(file, mutation_sql(rng, kind));
    bool ok = false;
    const std::string problem = fuzz_outcome([&] {
      expect_valid_slices(llmbench::read_nsys_export(file.string()), iter);
    }, ok);
    tally.add(iter, kind, kNames[int(kind)], problem, ok);
  }
  tally.report(kNames);
}

}  // namespace
