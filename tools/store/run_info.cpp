// Run environment facts (see run_info.h).
#include "tools/store/run_info.h"

#include "tools/store/sqlite_db.h"

#include <unistd.h>

#include <ctime>

#include "engine/model/cpu_backend.h"
#include "kernels/cpu/decode_dispatch.h"
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
  r.cpu_isa = cpu::cpu_dispatch_description();
  return r;
}

void bind_run_env(Stmt& s, int first, const RunInfo& r) {
  s.bind(first, r.started_at).bind(first + 1, r.command_line).bind(first + 2, r.version)
      .bind(first + 3, r.git_commit).bind(first + 4, r.build_type).bind(first + 5, r.host)
      .bind(first + 6, r.cpu);
}

void read_run_env(const Stmt& s, int first, RunInfo& r) {
  r.started_at = s.column_text(first);
  r.command_line = s.column_text(first + 1);
  r.version = s.column_text(first + 2);
  r.git_commit = s.column_text(first + 3);
  r.build_type = s.column_text(first + 4);
  r.host = s.column_text(first + 5);
  r.cpu = s.column_text(first + 6);
}

std::optional<RunInfo> read_run_info(Db& db, std::int64_t run_id) {
  // Columns of later versions read where the database has them (it may be an older one
  // opened read-only).
  const bool sweep_columns = db.has_column("run", "plan_key");
  const bool sweep_key = db.has_column("run", "sweep_key");
  const bool dtype_peaks = db.has_column("run", "peak_int4_tflops");
  const bool isa = db.has_column("run", "cpu_isa");
  auto q = db.prepare(
      std::string("SELECT ") + kRunEnvColumns +
      ", gpu, driver, threads, peak_bandwidth_gbps, peak_tflops, peak_source" +
      (sweep_columns ? ", COALESCE(plan_key, ''), COALESCE(n_cases, 0), COALESCE(profile, ''),"
                       " COALESCE(shard, '')"
                     : ", '', 0, '', ''") +
      (sweep_key ? ", COALESCE(sweep_key, '')" : ", ''") +
      (dtype_peaks ? ", peak_fp32_tflops, peak_bf16_tflops, peak_fp16_tflops, peak_int8_tflops,"
                     " peak_int4_tflops"
                   : "") +
      (isa ? ", COALESCE(cpu_isa, '')" : ", ''") + " FROM run WHERE id = ?");
  q.bind(1, run_id);
  if (!q.step()) return std::nullopt;
  RunInfo r;
  r.id = run_id;
  read_run_env(q, 0, r);
  int i = kRunEnvColumnCount;
  r.gpu = q.column_text(i++);
  r.driver = q.column_text(i++);
  r.threads = int(q.column_int(i++));
  r.peaks.bandwidth_gbps = q.column_double(i++);
  r.peaks.tflops = q.column_double(i++);
  r.peaks.source = q.column_text(i++);
  r.plan_key = q.column_text(i++);
  r.n_cases = int(q.column_int(i++));
  r.profile = q.column_text(i++);
  r.shard = q.column_text(i++);
  r.sweep_key = q.column_text(i++);
  if (dtype_peaks) {
    const DType dtypes[] = {DType::kFp32, DType::kBf16, DType::kFp16, DType::kInt8, DType::kInt4};
    for (const DType d : dtypes) {
      if (!q.column_is_null(i)) r.peaks.gemm_tflops[d] = q.column_double(i);
      ++i;
    }
  }
  r.cpu_isa = q.column_text(i++);
  return r;
}

std::optional<RunInfo> read_load_run_info(Db& db, std::int64_t load_run_id) {
  auto q = db.prepare(std::string("SELECT ") + kRunEnvColumns + " FROM load_run WHERE id = ?");
  q.bind(1, load_run_id);
  if (!q.step()) return std::nullopt;
  RunInfo r;
  r.id = load_run_id;
  read_run_env(q, 0, r);
  return r;
}

}  // namespace llmbench
