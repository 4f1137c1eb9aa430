// Nsight Systems SQLite export reader (see import_nsys.h and docs/import.md).
#include "tools/trace_io/import_nsys.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/checkpoint/input_file.h"
#include "kernels/common/error.h"
#include "tools/store/sqlite_db.h"
#include "tools/trace_io/nsys_encoding.h"

namespace llmbench {

namespace {

class NsysReader {
 public:
  NsysReader(const std::string& path, Db& db) : path_(path), db_(db) {}
  ReadTrace read();

 private:
  std::set<std::string> columns(const std::string& table);
  // "SELECT a, b, NULL ..." over the columns an export has; `required` missing -> nullopt.
  std::optional<Stmt> select(const std::string& table, const std::vector<std::string>& wanted,
                             const std::vector<std::string>& required,
                             const std::string& where = "");
  std::string string_id(std::int64_t id) const;
  // A column that holds a StringIds id (or, in some exports, the text itself).
  std::string text_column(const Stmt& s, int i) const;
  std::map<std::int64_t, std::string> enum_labels(const std::string& table);

  std::size_t process_of(std::int64_t pid);
  std::size_t thread_track(std::int64_t global_tid);
  std::size_t gpu_track(std::int64_t pid, std::optional<std::int64_t> device,
                        std::optional<std::int64_t> stream);
  std::size_t start_end_track(std::int64_t pid);
  bool interval_ok(const Stmt& s, const std::string& table);

  void read_metadata();
  void read_names();
  void read_nvtx();
  void read_api(const std::string& table, const std::string& category,
                std::map<std::pair<std::int64_t, std::int64_t>, std::size_t>& launches);
  void read_kernels();
  void read_memcpy();
  void read_memset();
  void add_gpu_op(std::int64_t pid, std::optional<std::int64_t> correlation);
  void link_flows();

  std::string path_;
  Db& db_;
  ImportedTrace t_;
  std::set<std::string> tables_;
  std::unordered_map<std::int64_t, std::string> strings_;
  std::map<std::int64_t, std::string> process_names_, thread_names_, gpu_names_;
  std::map<std::int64_t, std::size_t> process_, thread_track_, start_end_track_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::size_t> gpu_track_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> runtime_, driver_;
  struct GpuOp {
    std::size_t slice;
    std::int64_t pid, correlation;
  };
  std::vector<GpuOp> gpu_ops_;
};

std::set<std::string> NsysReader::columns(const std::string& table) {
  const std::vector<std::string> cols = db_.columns(table);
  return {cols.begin(), cols.end()};
}

std::optional<Stmt> NsysReader::select(const std::string& table,
                                       const std::vector<std::string>& wanted,
                                       const std::vector<std::string>& required,
                                       const std::string& where) {
  if (!tables_.count(table)) return std::nullopt;
  const auto have = columns(table);
  for (const auto& r : required)
    if (!have.count(r)) {
      t_.note(table + " not read: no column " + r);
      return std::nullopt;
    }
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < wanted.size(); ++i)
    sql += (i ? ", " : "") + (have.count(wanted[i]) ? "\"" + wanted[i] + "\"" : "NULL");
  sql += " FROM \"" + table + "\"" + (where.empty() ? "" : " WHERE " + where);
  return db_.prepare(sql);
}

std::string NsysReader::string_id(std::int64_t id) const {
  auto it = strings_.find(id);
  return it == strings_.end() ? std::string() : it->second;
}

std::string NsysReader::text_column(const Stmt& s, int i) const {
  switch (s.column_type(i)) {
    case SQLITE_INTEGER: return string_id(s.column_int(i));
    case SQLITE_TEXT: return s.column_text(i);
    default: return "";
  }
}

std::map<std::int64_t, std::string> NsysReader::enum_labels(const std::string& table) {
  std::map<std::int64_t, std::string> out;
  if (auto s = select(table, {"id", "name", "label"}, {"id"}))
    while (s->step()) out[s->column_int(0)] = s->column_type(2) != SQLITE_NULL
                                                  ? s->column_text(2)
                                                  : s->column_text(1);
  return out;
}

std::size_t NsysReader::process_of(std::int64_t pid) {
  auto [it, inserted] = process_.emplace(pid, t_.processes.size());
  if (inserted) {
    auto name = process_names_.find(pid);
    t_.processes.push_back({pid, name == process_names_.end() ? "" : name->second});
  }
  return it->second;
}

std::size_t NsysReader::thread_track(std::int64_t global_tid) {
  auto [it, inserted] = thread_track_.emplace(global_tid, t_.tracks.size());
  if (inserted) {
    const std::int64_t tid = nsys_tid_of(global_tid);
    auto name = thread_names_.find(global_tid);
    TraceThread th{tid, name == thread_names_.end() ? "" : name->second,
                   process_of(nsys_pid_of(global_tid))};
    t_.threads.push_back(th);
    TraceTrack k;
    k.name = th.name.empty() ? "thread " + std::to_string(tid) : th.name;
    k.type = "thread";
    k.thread = t_.threads.size() - 1;
    t_.tracks.push_back(std::move(k));
  }
  return it->second;
}

std::size_t NsysReader::gpu_track(std::int64_t pid, std::optional<std::int64_t> device,
                                  std::optional<std::int64_t> stream) {
  const auto key = std::tuple(pid, device.value_or(-1), stream.value_or(-1));
  auto [it, inserted] = gpu_track_.emplace(key, t_.tracks.size());
  if (inserted) {
    TraceTrack k;
    k.name = "GPU " + (device ? std::to_string(*device) : std::string("?"));
    if (device && gpu_names_.count(*device)) k.name += " (" + gpu_names_[*device] + ")";
    k.name += " stream " + (stream ? std::to_string(*stream) : std::string("?"));
    k.type = "gpu";
    k.process = process_of(pid);
    k.device_id = device;
    k.stream_id = stream;
    t_.tracks.push_back(std::move(k));
  }
  return it->second;
}

std::size_t NsysReader::start_end_track(std::int64_t pid) {
  auto [it, inserted] = start_end_track_.emplace(pid, t_.tracks.size());
  if (inserted) {
    TraceTrack k;
    k.name = "NVTX start/end ranges";
    k.type = "process";
    k.process = process_of(pid);
    t_.tracks.push_back(std::move(k));
  }
  return it->second;
}

// Columns 0 and 1 of every event query are start and end.
bool NsysReader::interval_ok(const Stmt& s, const std::string& table) {
  if (s.column_type(0) == SQLITE_NULL) {
    t_.skip(table + ": row without a start");
    return false;
  }
  if (s.column_type(1) == SQLITE_NULL) {
    t_.skip(table + ": row without an end");
    return false;
  }
  if (const char* problem = interval_problem(s.column_int(0), s.column_int(1))) {
    t_.skip(table + ": " + problem);
    return false;
  }
  return true;
}

void NsysReader::read_metadata() {
  for (const char* table : {"META_DATA_EXPORT", "EXPORT_META_DATA", "META_DATA_CAPTURE"}) {
    auto s = select(table, {"name", "value"}, {"name", "value"});
    if (!s) continue;
    auto& section = t_.metadata[table];
    while (s->step()) {
      const std::string name = s->column_text(0), value = s->column_text(1);
      section[name] = value;
      if (name == "EXPORT_SCHEMA_VERSION") t_.source_version = "export schema " + value;
    }
  }
}

void NsysReader::read_names() {
  if (auto s = select("StringIds", {"id", "value"}, {"id", "value"}))
    while (s->step()) strings_[s->column_int(0)] = s->column_text(1);
  if (auto s = select("PROCESSES", {"pid", "name"}, {"pid", "name"}))
    while (s->step()) process_names_[s->column_int(0)] = s->column_text(1);
  if (auto s = select("ThreadNames", {"globalTid", "nameId"}, {"globalTid", "nameId"}))
    while (s->step()) thread_names_[s->column_int(0)] = text_column(*s, 1);
  if (auto s = select("TARGET_INFO_GPU", {"id", "name"}, {"id", "name"}))
    while (s->step()) gpu_names_[s->column_int(0)] = s->column_text(1);
}

void NsysReader::read_nvtx() {
  const std::string table = "NVTX_EVENTS";
  if (!tables_.count(table)) return t_.note("no NVTX_EVENTS table (nothing was annotated)");
  NsysNvtxTypes types;
  if (auto e = select("ENUM_NSYS_EVENT_TYPE", {"id", "name"}, {"id", "name"})) {
    while (e->step()) {
      const std::string n = e->column_text(1);
      const std::int64_t id = e->column_int(0);
      if (n == "NvtxMark") types.mark = id;
      else if (n == "NvtxPushPopRange") types.push_pop = id;
      else if (n == "NvtxStartEndRange") types.start_end = id;
      else if (n == "NvtxDomainCreate") types.domain_create = id;
    }
  }
  // Domain names: NvtxDomainCreate rows carry the domain id and its name.
  std::map<std::int64_t, std::string> domains;
  if (auto s = select(table, {"domainId", "text", "textId"}, {"eventType"},
                      "eventType = " + std::to_string(types.domain_create))) {
    while (s->step())
      if (s->column_type(0) != SQLITE_NULL)
        domains[s->column_int(0)] = s->column_type(1) == SQLITE_TEXT ? s->column_text(1)
                                                                      : text_column(*s, 2);
  }
  auto s = select(table,
                  {"start", "end", "eventType", "rangeId", "category", "color", "text",
                   "globalTid", "endGlobalTid", "textId", "domainId", "uint64Value",
                   "int64Value", "doubleValue", "uint32Value", "int32Value", "floatValue",
                   "jsonText", "jsonTextId"},
                  {"start", "eventType"});
  if (!s) return;
  while (s->step()) {
    const std::int64_t type = s->column_int(2);
    const bool mark = type == types.mark, push_pop = type == types.push_pop,
               start_end = type == types.start_end;
    if (!mark && !push_pop && !start_end) {
      if (!types.metadata.count(type))
        t_.skip("NVTX_EVENTS: eventType " + std::to_string(type) + " (not a range or mark)");
      continue;
    }
    std::int64_t start = s->column_int(0), end = start;
    if (!mark) {
      if (s->column_type(1) == SQLITE_NULL) {
        t_.skip("NVTX_EVENTS: range without an end");
        continue;
      }
      end = s->column_int(1);
      if (const char* problem = interval_problem(start, end)) {
        t_.skip(std::string("NVTX_EVENTS: ") + problem);
        continue;
      }
    }
    const std::int64_t global_tid = nsys_opt_int(*s, 7).value_or(0);
    std::string name = s->column_type(6) == SQLITE_TEXT ? s->column_text(6) : text_column(*s, 9);
    if (name.empty()) name = "[no name]";
    const std::size_t track = start_end ? start_end_track(nsys_pid_of(global_tid))
                                        : thread_track(global_tid);
    t_.add_slice(start, end - start, track, mark ? "nvtx_mark" : "nvtx", name);
    if (auto domain = nsys_opt_int(*s, 10); domain && *domain != 0)
      t_.add_arg("domain", domains.count(*domain) ? domains[*domain]
                                                   : "domain " + std::to_string(*domain));
    if (auto category = nsys_opt_int(*s, 4); category && *category != 0)
      t_.add_arg("category", *category);
    if (auto color = nsys_opt_int(*s, 5); color && *color != 0) t_.add_arg("color", *color);
    for (int col = 11; col <= 16; ++col) {  // the payload union: the first value present
      if (s->column_type(col) == SQLITE_NULL) continue;
      if (col == 13 || col == 16) t_.add_arg("payload", s->column_double(col));
      else t_.add_arg("payload", s->column_int(col));
      break;
    }
    const std::string json_text =
        s->column_type(17) == SQLITE_TEXT ? s->column_text(17) : text_column(*s, 18);
    if (!json_text.empty()) t_.add_arg("json", json_text);
    if (start_end) {
      if (auto id = nsys_opt_int(*s, 3)) t_.add_arg("range_id", *id);
      t_.add_arg("start_tid", nsys_tid_of(global_tid));
      if (auto end_tid = nsys_opt_int(*s, 8)) t_.add_arg("end_tid", nsys_tid_of(*end_tid));
    }
  }
}

void NsysReader::read_api(const std::string& table, const std::string& category,
                          std::map<std::pair<std::int64_t, std::int64_t>, std::size_t>& launches) {
  auto s = select(table, {"start", "end", "globalTid", "correlationId", "nameId", "returnValue"},
                  {"start", "end"});
  if (!s) return;
  while (s->step()) {
    if (!interval_ok(*s, table)) continue;
    const std::int64_t start = s->column_int(0), global_tid = nsys_opt_int(*s, 2).value_or(0);
    std::string name = strip_api_version(text_column(*s, 4));
    if (name.empty()) name = "[unknown API call]";
    TraceSlice& slice = t_.add_slice(start, s->column_int(1) - start, thread_track(global_tid),
                                     category, name);
    if (auto c = nsys_opt_int(*s, 3)) {
      slice.correlation_id = c;
      launches.emplace(std::pair(nsys_pid_of(global_tid), *c), t_.slices.size() - 1);
    }
    if (auto rv = nsys_opt_int(*s, 5)) t_.add_arg("return_value", *rv);
  }
}

void NsysReader::add_gpu_op(std::int64_t pid, std::optional<std::int64_t> correlation) {
  if (!correlation) return;
  t_.slices.back().correlation_id = correlation;
  gpu_ops_.push_back({t_.slices.size() - 1, pid, *correlation});
}

void NsysReader::read_kernels() {
  const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
  auto s = select(table,
                  {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                   "globalPid", "demangledName", "shortName", "mangledName", "gridX", "gridY",
                   "gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
                   "staticSharedMemory", "dynamicSharedMemory"},
                  {"start", "end"});
  if (!s) return;
  while (s->step()) {
    if (!interval_ok(*s, table)) continue;
    const std::int64_t start = s->column_int(0), pid = nsys_pid_of(nsys_opt_int(*s, 6).value_or(0));
    std::string name = text_column(*s, 7);
    const std::string short_name = text_column(*s, 8);
    if (name.empty()) name = short_name;
    if (name.empty()) name = text_column(*s, 9);
    if (name.empty()) name = "[unknown kernel]";
    t_.add_slice(start, s->column_int(1) - start, gpu_track(pid, nsys_opt_int(*s, 2), nsys_opt_int(*s, 4)),
                 "kernel", name);
    add_gpu_op(pid, nsys_opt_int(*s, 5));
    if (!short_name.empty() && short_name != name) t_.add_arg("short_name", short_name);
    if (auto v = nsys_opt_int(*s, 2)) t_.add_arg("device", *v);
    if (auto v = nsys_opt_int(*s, 3)) t_.add_arg("context", *v);
    if (auto v = nsys_opt_int(*s, 4)) t_.add_arg("stream", *v);
    const char* dims[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d)
      if (auto v = nsys_opt_int(*s, 10 + d)) t_.add_arg("grid", std::string("grid.") + dims[d], *v);
    for (int d = 0; d < 3; ++d)
      if (auto v = nsys_opt_int(*s, 13 + d)) t_.add_arg("block", std::string("block.") + dims[d], *v);
    if (auto v = nsys_opt_int(*s, 16)) t_.add_arg("registers_per_thread", *v);
    if (auto v = nsys_opt_int(*s, 17)) t_.add_arg("static_shared_memory_bytes", *v);
    if (auto v = nsys_opt_int(*s, 18)) t_.add_arg("dynamic_shared_memory_bytes", *v);
  }
}

void NsysReader::read_memcpy() {
  const std::string table = "CUPTI_ACTIVITY_KIND_MEMCPY";
  auto kinds = enum_labels("ENUM_CUDA_MEMCPY_OPER");
  const auto mem_kinds = enum_labels("ENUM_CUDA_MEM_KIND");
  for (std::int64_t k = 0; k < std::int64_t(std::size(kNsysCopyKinds)); ++k)
    kinds.emplace(k, kNsysCopyKinds[k]);  // exports without the enum table: CUPTI's numbering
  auto label = [](const std::map<std::int64_t, std::string>& m, std::int64_t v) -> ArgValue {
    auto it = m.find(v);
    if (it == m.end()) return v;
    return it->second;
  };
  auto s = select(table,
                  {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                   "globalPid", "bytes", "copyKind", "srcKind", "dstKind"},
                  {"start", "end"});
  if (!s) return;
  while (s->step()) {
    if (!interval_ok(*s, table)) continue;
    const std::int64_t start = s->column_int(0), pid = nsys_pid_of(nsys_opt_int(*s, 6).value_or(0));
    const auto kind = nsys_opt_int(*s, 8);
    const std::string kind_label =
        kind && kinds.count(*kind) ? kinds.at(*kind) : std::string("Unknown");
    t_.add_slice(start, s->column_int(1) - start, gpu_track(pid, nsys_opt_int(*s, 2), nsys_opt_int(*s, 4)),
                 "gpu_memcpy", "[CUDA memcpy " + kind_label + "]");
    t_.slices.back().bytes = nsys_opt_int(*s, 7);
    add_gpu_op(pid, nsys_opt_int(*s, 5));
    t_.add_arg("copy_kind", kind_label);
    if (auto v = nsys_opt_int(*s, 7)) t_.add_arg("bytes", *v);
    if (auto v = nsys_opt_int(*s, 9)) t_.add_arg("src_kind", label(mem_kinds, *v));
    if (auto v = nsys_opt_int(*s, 10)) t_.add_arg("dst_kind", label(mem_kinds, *v));
    if (auto v = nsys_opt_int(*s, 2)) t_.add_arg("device", *v);
    if (auto v = nsys_opt_int(*s, 4)) t_.add_arg("stream", *v);
  }
}

void NsysReader::read_memset() {
  const std::string table = "CUPTI_ACTIVITY_KIND_MEMSET";
  const auto mem_kinds = enum_labels("ENUM_CUDA_MEM_KIND");
  auto s = select(table,
                  {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                   "globalPid", "bytes", "value", "memKind"},
                  {"start", "end"});
  if (!s) return;
  while (s->step()) {
    if (!interval_ok(*s, table)) continue;
    const std::int64_t start = s->column_int(0), pid = nsys_pid_of(nsys_opt_int(*s, 6).value_or(0));
    t_.add_slice(start, s->column_int(1) - start, gpu_track(pid, nsys_opt_int(*s, 2), nsys_opt_int(*s, 4)),
                 "gpu_memset", "[CUDA memset]");
    t_.slices.back().bytes = nsys_opt_int(*s, 7);
    add_gpu_op(pid, nsys_opt_int(*s, 5));
    if (auto v = nsys_opt_int(*s, 7)) t_.add_arg("bytes", *v);
    if (auto v = nsys_opt_int(*s, 8)) t_.add_arg("value", *v);
    if (auto v = nsys_opt_int(*s, 9)) {
      auto it = mem_kinds.find(*v);
      if (it != mem_kinds.end()) t_.add_arg("mem_kind", it->second);
      else t_.add_arg("mem_kind", *v);
    }
    if (auto v = nsys_opt_int(*s, 2)) t_.add_arg("device", *v);
    if (auto v = nsys_opt_int(*s, 4)) t_.add_arg("stream", *v);
  }
}

// Correlation ids are unique within a process: the runtime (else driver) call of the same
// process with the same id launched the activity.
void NsysReader::link_flows() {
  for (const GpuOp& op : gpu_ops_) {
    const auto key = std::pair(op.pid, op.correlation);
    std::optional<std::size_t> launch;
    if (auto r = runtime_.find(key); r != runtime_.end()) launch = r->second;
    else if (auto d = driver_.find(key); d != driver_.end()) launch = d->second;
    if (!launch) {
      t_.note("GPU activities without a launching API call");
      continue;
    }
    t_.flows.push_back({*launch, op.slice});
  }
}

ReadTrace NsysReader::read() {
  auto s = db_.prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')");
  std::string view;
  while (s.step()) {
    if (s.column_text(1) == "view" && view.empty()) view = s.column_text(0);
    tables_.insert(s.column_text(0));
  }
  if (!tables_.count("StringIds") && !tables_.count("META_DATA_EXPORT") &&
      !tables_.count("EXPORT_META_DATA"))
    throw BadInput("nsys export '" + path_ +
                   "' is not an Nsight Systems SQLite export (it has none of the tables "
                   "StringIds, META_DATA_EXPORT, EXPORT_META_DATA; make one with "
                   "`nsys export --type sqlite REPORT.nsys-rep`)");
  // Nsight Systems writes tables only. A view is code, and a recursive one runs without end
  // (an import of one ran until killed at 3.6 GB): refused before anything reads it.
  if (!view.empty())
    throw BadInput("nsys export '" + path_ + "': '" + view +
                   "' is a view; an Nsight Systems export holds tables only");
  read_metadata();
  read_names();
  read_nvtx();
  read_api("CUPTI_ACTIVITY_KIND_RUNTIME", "cuda_runtime", runtime_);
  read_api("CUPTI_ACTIVITY_KIND_DRIVER", "cuda_driver", driver_);
  read_kernels();
  read_memcpy();
  read_memset();
  link_flows();
  ReadTrace out;
  out.index = TrackIndex(t_);
  out.trace = std::move(t_);
  return out;
}

}  // namespace

ReadTrace read_nsys_export(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw BadInput("nsys export '" + path + "' does not exist");
  if (std::filesystem::is_directory(path, ec))
    throw BadInput("nsys export '" + path + "' is a directory");
  refuse_special_file(path, "nsys export");
  std::unique_ptr<Db> db;
  try {
    db = std::make_unique<Db>(path, Db::Mode::kReadOnly);
  } catch (const BadInput&) {
    throw BadInput("nsys export '" + path +
                   "' is not an SQLite file (expected the .sqlite written by `nsys export "
                   "--type sqlite`, not the .nsys-rep report)");
  }
  try {
    return NsysReader(path, *db).read();
  } catch (const BadInput&) {
    throw;
  } catch (const Error& e) {  // SQL errors from an export of an unexpected shape
    throw BadInput("nsys export '" + path + "': " + e.what());
  }
}

}  // namespace llmbench
