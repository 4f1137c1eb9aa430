// `--history H.db` and its companions (--commit, --commit-time, --branch) on `run`, `sweep` and
// `load`: after the command stored its run, the run's points are appended to the history
// database (tools/history/history_import.h; docs/ci.md, "History"). `compare --run` has its own.
#pragma once
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace llmbench {

struct HistoryFlags {
  std::string history;  // "": off
  std::optional<std::string> commit, commit_time, branch;
};

void add_history_flags(CLI::App* cmd, HistoryFlags& f);

// Appends the latest run (serving: the latest load run) of `db` to f.history, when set; one
// `info:` line on stderr says how many points.
void append_latest_run(const HistoryFlags& f, const std::string& db, bool serving);

}  // namespace llmbench
