// Run environment facts (see run_info.h).
#include "tools/store/run_info.h"

#include "tools/store/sqlite_db.h"

#include <unistd.h>

#include <ctime>

#include "engine/model/cpu_backend.h"
#include "tools/build_info/version.h"

namespace llmbench {

std::string utc_now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

RunInfo current_run_info() {
  RunInfo r;
  r.started_at = utc_now_iso8601();
  r.version = kVersion;
  r.git_commit = kGitCommit;
  r.build_type = kBuildType;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) r.host = host;
  r.cpu = cpu_model_name();
  return r;
}

std::optional<RunInfo> read_run_info(Db& db, std::int64_t run_id) {
  auto has = db.prepare("SELECT 1 FROM pragma_table_info('run') WHERE name = 'plan_key'");
  const bool sweep_columns = has.step();
  auto has_peaks = db.prepare("SELECT 1 FROM pragma_table_info('run') WHERE name = 'peak_int4_tflops'");
  const bool dtype_peaks = has_peaks.step();
  auto q = db.prepare(
      std::string("SELECT started_at, command_line, llmbench_version, git_commit, build_type,"
                  " host, cpu, gpu, driver, threads, peak_bandwidth_gbps, peak_tflops,"
                  " peak_source") +
      (sweep_columns ? ", COALESCE(plan_key, ''), COALESCE(n_cases, 0), COALESCE(profile, ''),"
                       " COALESCE(shard, '')"
                     : ", '', 0, '', ''") +
      (dtype_peaks ? ", peak_fp32_tflops, peak_bf16_tflops, peak_fp16_tflops, peak_int8_tflops,"
                     " peak_int4_tflops"
                   : "") +
      " FROM run WHERE id = ?");
  q.bind(1, run_id);
  if (!q.step()) return std::nullopt;
  RunInfo r;
  r.started_at = q.column_text(0);
  r.command_line = q.column_text(1);
  r.version = q.column_text(2);
  r.git_commit = q.column_text(3);
  r.build_type = q.column_text(4);
  r.host = q.column_text(5);
  r.cpu = q.column_text(6);
  r.gpu = q.column_text(7);
  r.driver = q.column_text(8);
  r.threads = int(q.column_int(9));
  r.peaks.bandwidth_gbps = q.column_double(10);
  r.peaks.tflops = q.column_double(11);
  r.peaks.source = q.column_text(12);
  if (sweep_columns) {
    r.plan_key = q.column_text(13);
    r.n_cases = int(q.column_int(14));
    r.profile = q.column_text(15);
    r.shard = q.column_text(16);
  }
  if (dtype_peaks) {
    const DType dtypes[] = {DType::kFp32, DType::kBf16, DType::kFp16, DType::kInt8, DType::kInt4};
    for (int i = 0; i < 5; ++i)
      if (!q.column_is_null(17 + i)) r.peaks.gemm_tflops[dtypes[i]] = q.column_double(17 + i);
  }
  return r;
}

}  // namespace llmbench
