// The interleaved runner (see compare_rounds.h).
#include "tools/compare/compare_rounds.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <random>

#include <fmt/core.h>

#include "kernels/common/error.h"
#include "tools/store/store.h"

extern char** environ;

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs argv with stdout and stderr appended to `log`; returns the exit code (128 + signal).
int spawn_and_wait(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error(fmt::format("cannot start '{}': {}", argv[0], std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(fmt::format("waitpid: {}", std::strerror(errno)));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

// Round `round` (1-based) of the side runs so far: pointers into `runs`, which must not move.
GateRound round_of(const std::vector<SideRun>& runs, int round, bool base_first) {
  GateRound g;
  g.round = round;
  g.base_first = base_first;
  for (const SideRun& s : runs)
    if (s.round == round && s.run) (s.base ? g.base : g.cand) = &*s.run;
  return g;
}

void require_executable(const std::string& path, const char* what) {
  if (access(path.c_str(), X_OK) != 0)
    throw BadInput(fmt::format("{} '{}' is not an executable file", what, path));
}

}  // namespace

std::vector<bool> round_orders(int rounds, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<bool> out;
  for (int r = 0; r < rounds; ++r) out.push_back((rng() >> 63) != 0);
  return out;
}

std::string side_db_path(const std::string& gate_db, bool base) {
  std::filesystem::path p(gate_db);
  const std::string stem = p.extension() == ".db" ? p.stem().string() : p.filename().string();
  return (p.parent_path() / (stem + (base ? ".base.db" : ".cand.db"))).string();
}

RoundsResult run_rounds(const RoundsOptions& o) {
  require_executable(o.base_bin, "BASE_BIN");
  require_executable(o.cand_bin, "CAND_BIN");
  if (o.rounds < 1) throw BadInput("--rounds: expected at least 1");
  if (o.db.empty()) throw BadInput("--db: the gate database path is empty");
  RoundsResult res;
  res.gate_db = o.db;
  res.base_db = side_db_path(o.db, true);
  res.cand_db = side_db_path(o.db, false);
  res.log_path = o.db + ".log";
  const auto t0 = Clock::now();

  // The gate tables (gate, gate_round, gate_sample, gate_result) are part of the one schema.
  ResultStore gate_store(o.db);
  Db& gate = gate_store.db();
  gate.prepare("INSERT INTO gate (started_at, base_bin, cand_bin, profile, rounds, order_seed,"
               " base_db, cand_db) VALUES (?,?,?,?,?,?,?,?)")
      .bind(1, utc_now_iso8601()).bind(2, o.base_bin).bind(3, o.cand_bin).bind(4, o.profile)
      .bind(5, o.rounds).bind(6, std::int64_t(o.order_seed)).bind(7, res.base_db)
      .bind(8, res.cand_db).run();
  res.gate_id = gate.last_insert_id();

  const std::vector<bool> base_first = round_orders(o.rounds, o.order_seed);
  res.runs.reserve(std::size_t(o.rounds) * 2);  // GateRound points into it
  for (int r = 0; r < o.rounds; ++r) {
    for (int pos = 0; pos < 2; ++pos) {
      const bool base = (pos == 0) == base_first[std::size_t(r)];
      const std::string& db = base ? res.base_db : res.cand_db;
      std::vector<std::string> argv = {base ? o.base_bin : o.cand_bin, "sweep", o.profile,
                                       "--db", db, "--quiet", "--format", "csv"};
      if (o.repeat) argv.insert(argv.end(), {"--repeat", std::to_string(*o.repeat)});
      if (o.warmup) argv.insert(argv.end(), {"--warmup", std::to_string(*o.warmup)});
      argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
      if (o.progress)
        o.progress(fmt::format("round {}/{}: {} ({})", r + 1, o.rounds, base ? "base" : "cand",
                               pos == 0 ? "first" : "second"));
      SideRun run;
      run.round = r + 1;
      run.base = base;
      run.position = pos;
      const auto ts = Clock::now();
      run.exit_code = spawn_and_wait(argv, res.log_path);
      run.wall_s = seconds_since(ts);
      if (run.exit_code == 0 || run.exit_code == 1) {
        try {
          run.run = read_bench_run(SideSpec{db, std::nullopt}, base ? "BASE" : "CAND");
        } catch (const BadInput&) {
          run.run.reset();  // no run written: the side is empty this round
        }
      }
      res.runs.push_back(std::move(run));
    }
    res.rounds.push_back(round_of(res.runs, r + 1, base_first[std::size_t(r)]));
    if (o.after_round && !o.after_round(res.rounds)) break;
  }
  res.wall_s = seconds_since(t0);
  const int rounds_run = int(res.rounds.size());
  transaction(gate, [&] {
    for (const SideRun& s : res.runs) {
      auto st = gate.prepare("INSERT INTO gate_round (gate_id, round, side, position, exit_code,"
                             " wall_s, run_id) VALUES (?,?,?,?,?,?,?)");
      st.bind(1, res.gate_id).bind(2, s.round).bind(3, std::string(s.base ? "base" : "cand"))
          .bind(4, s.position).bind(5, s.exit_code).bind(6, s.wall_s);
      if (s.run) st.bind(7, s.run->run.id); else st.bind_null(7);
      st.run();
      if (!s.run) continue;
      auto ins = gate.prepare("INSERT INTO gate_sample (gate_id, round, side, case_label, case_id,"
                              " metric, rep, value) VALUES (?,?,?,?,?,?,?,?)");
      for (const CaseSamples& c : s.run->cases)
        for (const MetricInfo& m : all_metrics()) {
          const auto xs = c.samples(m.metric);
          if (!xs) continue;
          for (std::size_t i = 0; i < xs->size(); ++i) {
            ins.reset();
            ins.bind(1, res.gate_id).bind(2, s.round).bind(3, std::string(s.base ? "base" : "cand"))
                .bind(4, c.label()).bind(5, c.case_id).bind(6, std::string(m.column))
                .bind(7, int(i)).bind(8, (*xs)[i]).run();
          }
        }
    }
    gate.prepare("UPDATE gate SET wall_s = ?, rounds = ? WHERE id = ?").bind(1, res.wall_s)
        .bind(2, rounds_run).bind(3, res.gate_id).run();
  });
  return res;
}

void store_gate_result(const std::string& gate_db, std::int64_t gate_id, const GateReport& g) {
  ResultStore store(gate_db);
  Db& db = store.db();
  transaction(db, [&] {
    for (const GateCase& c : g.cases) {
      if (c.status != CaseStatus::kCompared) {
        db.prepare("INSERT INTO gate_result (gate_id, case_label, metric, rounds, verdict)"
                   " VALUES (?,?,'-',0,?)")
            .bind(1, gate_id).bind(2, c.label).bind(3, std::string(case_status_name(c.status)))
            .run();
        continue;
      }
      for (const PairedMetric& m : c.metrics) {
        auto st = db.prepare("INSERT INTO gate_result (gate_id, case_label, metric, rounds, ratio,"
                             " ci_low, ci_high, p_value, verdict, aa_ratio, aa_noise_pct)"
                             " VALUES (?,?,?,?,?,?,?,?,?,?,?)");
        auto pct = [](std::optional<double> x) {
          return x ? std::optional<double>(*x * 100) : std::nullopt;
        };
        st.bind(1, gate_id).bind(2, c.label).bind(3, std::string(metric_info(m.metric).column))
            .bind(4, m.rounds).bind(5, m.ratio).bind(6, m.ci_low).bind(7, m.ci_high)
            .bind(8, m.test ? std::optional<double>(m.test->p_value) : std::nullopt)
            .bind(9, std::string(verdict_name(m.verdict))).bind(10, m.aa_ratio)
            .bind(11, pct(m.aa_noise))
            .run();
      }
    }
  });
}

}  // namespace llmbench
