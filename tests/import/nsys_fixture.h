// Builds small Nsight Systems SQLite exports for import tests, from the documented export
// schema (docs.nvidia.com "SQLite Export Schema Reference": StringIds, NVTX_EVENTS,
// CUPTI_ACTIVITY_KIND_KERNEL / _RUNTIME / _MEMCPY / _MEMSET, ThreadNames, PROCESSES,
// TARGET_INFO_GPU, ENUM_NSYS_EVENT_TYPE, ENUM_CUDA_MEMCPY_OPER, META_DATA_EXPORT or the older
// EXPORT_META_DATA), never from a download. One scenario, with variations by option:
//
//   thread A (pid 100, tid 101), times in ns:
//     NVTX push/pop "step" [1000, 10000)           domain "llmbench"
//       mark "marker" @1500
//       cudaLaunchKernel [1100, 1200) corr 10  -> relu_kernel   [1300, 1400) stream 7
//       NVTX "registered_range" (textId) [2000, 6000), int64 payload 3, domain "llmbench"
//         cudaLaunchKernel [2100, 2300) corr 11 -> gemm_kernel [3000, 5000) stream 7
//         cudaLaunchKernel [2400, 2500) corr 12 -> relu_kernel [5200, 5600) stream 7
//       NVTX "tail" [6500, 9000)
//         cudaMemcpyAsync [6600, 6700) corr 13  -> memcpy DtoH 4096 B [6800, 7800) stream 7
//         cudaDeviceSynchronize [7000, 8900) corr 15 (launches nothing)
//     NVTX start/end "async_io" [3000, 12000), started on thread A, ended on thread B (tid 102)
//     one push/pop range without an end, one with end < start (both skipped)
//   GPU 0 without a launching call: memset 256 B [8000, 8100) corr 14 stream 7,
//                                   other_kernel [3500, 4500) corr 16 stream 8
#pragma once
#include <filesystem>
#include <string>

#include "tests/import/sqlite_rows.h"

namespace llmbench_test {

struct NsysOptions {
  std::string meta_table = "META_DATA_EXPORT";  // older exports: EXPORT_META_DATA
  bool nvtx = true;                             // NVTX_EVENTS is absent when nothing annotated
  bool enums = true;                            // ENUM_* tables
  bool minimal_kernel_columns = false;          // an export version with fewer kernel columns
};

// The scenario's global thread ids: nsys serialises pid in bits 24..47 and tid in 0..23; the
// upper bits carry other ids (here bit 56), which the importer must mask off.
constexpr long long kPid = 100, kTidA = 101, kTidB = 102;
constexpr long long kGlobalPid = (1LL << 56) | (kPid << 24);
constexpr long long kGlobalTidA = kGlobalPid | kTidA, kGlobalTidB = kGlobalPid | kTidB;

inline void make_nsys_export(const std::filesystem::path& path, const NsysOptions& o = {}) {
  std::filesystem::remove(path);
  const std::string a = std::to_string(kGlobalTidA), b = std::to_string(kGlobalTidB),
                    gp = std::to_string(kGlobalPid);
  std::string sql = R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'gemm_kernel<float>(float*)'),
  (3, 'gemm_kernel'), (4, '_Z11gemm_kernelIfEvPf'), (5, 'relu_kernel'),
  (6, 'cudaMemcpyAsync_v3020'), (7, 'registered_range'), (8, 'ThreadMain'),
  (9, 'other_kernel'), (10, 'cudaDeviceSynchronize_v3020');
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (8, 0, )" + a + R"();
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES ()" + gp + R"(, 100, 'python3');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100', '0000:01:00.0');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
  nameId INTEGER NOT NULL REFERENCES StringIds(id), returnValue INTEGER NOT NULL,
  callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (1100, 1200, 0, )" + a + R"(, 10, 1, 0, NULL),
  (2100, 2300, 0, )" + a + R"(, 11, 1, 0, NULL),
  (2400, 2500, 0, )" + a + R"(, 12, 1, 0, NULL),
  (6600, 6700, 0, )" + a + R"(, 13, 6, 0, NULL),
  (7000, 8900, 0, )" + a + R"(, 15, 10, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
  srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
  (6800, 7800, 0, 1, 7, 13, )" + gp + R"(, 4096, 2, NULL, 1, 0, 0, 1, NULL, NULL, NULL, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES
  (8000, 8100, 0, 1, 7, 14, )" + gp + R"(, 0, 256, NULL, 1);
)";
  if (o.minimal_kernel_columns) {
    sql += R"(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  shortName INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1300, 1400, 0, 7, 10, 5), (3000, 5000, 0, 7, 11, 3), (5200, 5600, 0, 7, 12, 5),
  (3500, 4500, 0, 8, 16, 9);
)";
  } else {
    sql += R"(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
  gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
  localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1300, 1400, 0, 1, 7, 10, )" + gp + R"(, 5, 5, NULL, 0, 0, 16, 8, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1, NULL, NULL, NULL),
  (3000, 5000, 0, 1, 7, 11, )" + gp + R"(, 2, 3, 4, 0, 0, 32, 4, 2, 1, 128, 1, 1, 1024, 2048, 0, 0, 2, NULL, NULL, NULL),
  (5200, 5600, 0, 1, 7, 12, )" + gp + R"(, 5, 5, NULL, 0, 0, 16, 8, 1, 1, 256, 1, 1, 0, 0, 0, 0, 3, NULL, NULL, NULL),
  (3500, 4500, 0, 1, 8, 16, )" + gp + R"(, 9, 9, NULL, 0, 0, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 4, NULL, NULL, NULL);
)";
  }
  if (o.nvtx) {
    sql += R"(
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER REFERENCES StringIds(id), domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, globalTid,
                         endGlobalTid, textId, domainId, int64Value) VALUES
  (500, NULL, 75, NULL, NULL, NULL, 'llmbench', )" + a + R"(, NULL, NULL, 5, NULL),
  (1000, 10000, 59, NULL, NULL, 4278190335, 'step', )" + a + R"(, NULL, NULL, 5, NULL),
  (1500, 1500, 34, NULL, NULL, NULL, 'marker', )" + a + R"(, NULL, NULL, 0, NULL),
  (2000, 6000, 59, NULL, NULL, NULL, NULL, )" + a + R"(, NULL, 7, 5, 3),
  (6500, 9000, 59, NULL, NULL, NULL, 'tail', )" + a + R"(, NULL, NULL, 0, NULL),
  (3000, 12000, 60, 1, NULL, NULL, 'async_io', )" + a + ", " + b + R"(, NULL, 0, NULL),
  (9500, NULL, 59, NULL, NULL, NULL, 'unclosed', )" + a + R"(, NULL, NULL, 0, NULL),
  (9800, 9700, 59, NULL, NULL, NULL, 'backwards', )" + a + R"(, NULL, NULL, 0, NULL);
)";
  }
  if (o.enums) {
    sql += R"(
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (33, 'NvtxCategory', 'NVTX Category'),
  (34, 'NvtxMark', 'NVTX Mark'), (39, 'NvtxThread', 'NVTX Thread'),
  (59, 'NvtxPushPopRange', 'NVTX PushPop Range'), (60, 'NvtxStartEndRange', 'NVTX StartEnd Range'),
  (75, 'NvtxDomainCreate', 'NVTX Domain Create'), (76, 'NvtxDomainDestroy', 'NVTX Domain Destroy');
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),
  (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'), (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'),
  (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device');
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
  (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');
)";
  }
  if (!o.meta_table.empty()) {
    sql += "CREATE TABLE " + o.meta_table + " (name TEXT, value TEXT);\n";
    sql += "INSERT INTO " + o.meta_table +
           " VALUES ('EXPORT_SCHEMA_VERSION', '3.11.1'), ('NSYS_VERSION', '2024.2.1');\n";
  }
  sql_exec(path.string(), sql);
}

}  // namespace llmbench_test
