// See report_select.h.
#include "tools/report/report_select.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "kernels/common/error.h"

namespace llmbench::report {

namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

ReportSide parse_report_side(const std::string& arg) {
  ReportSide side;
  side.arg = arg;
  side.path = arg;
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return side;
  const auto colon = arg.rfind(':');
  if (colon == std::string::npos || colon == 0 || !all_digits(arg.substr(colon + 1))) return side;
  const std::int64_t id = std::stoll(arg.substr(colon + 1));
  std::string rest = arg.substr(0, colon);
  for (const auto& [word, kind] : {std::pair<std::string, RunKind>{":run", RunKind::kEngine},
                                   {":load", RunKind::kLoad}}) {
    if (rest.size() > word.size() && rest.compare(rest.size() - word.size(), word.size(), word) == 0) {
      rest.resize(rest.size() - word.size());
      side.kind = kind;
      break;
    }
  }
  side.path = rest;
  side.id = id;
  return side;
}

std::optional<std::int64_t> latest_load_run(Db& db) {
  if (!db.has_table("load_run")) return std::nullopt;
  Stmt q = db.prepare("SELECT MAX(id) FROM load_run");
  if (!q.step() || q.column_is_null(0)) return std::nullopt;
  return q.column_int(0);
}

bool has_load_run(Db& db, std::int64_t id) {
  if (!db.has_table("load_run")) return false;
  Stmt q = db.prepare("SELECT 1 FROM load_run WHERE id = ?");
  q.bind(1, id);
  return q.step();
}

bool has_engine_run(Db& db, std::int64_t id, const std::string& group_sql) {
  if (!db.has_table("run")) return false;
  Stmt q = db.prepare("SELECT 1 FROM run WHERE " + group_sql + " = ?");
  q.bind(1, id);
  return q.step();
}

void resolve_side(Db& db, ReportSide& side, const std::string& group_sql) {
  if (!side.id) return;
  const std::int64_t id = *side.id;
  const std::string n = std::to_string(id);
  const bool engine = has_engine_run(db, id, group_sql), load = has_load_run(db, id);
  switch (side.kind) {
    case RunKind::kEngine:
      if (!engine) throw BadInput("report: '" + side.path + "' has no run " + n);
      return;
    case RunKind::kLoad:
      if (!load) throw BadInput("report: '" + side.path + "' has no load run " + n);
      return;
    case RunKind::kAny:
      if (engine && load)
        throw BadInput("report: '" + side.arg + "' is ambiguous: '" + side.path +
                       "' has both run " + n + " (llmbench run) and load run " + n +
                       " (llmbench load); write " + side.path + ":run:" + n + " or " + side.path +
                       ":load:" + n);
      if (!engine && !load)
        throw BadInput("report: '" + side.path + "' has no run " + n + " and no load run " + n);
      side.kind = engine ? RunKind::kEngine : RunKind::kLoad;
      return;
  }
}

}  // namespace llmbench::report
