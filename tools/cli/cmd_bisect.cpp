// `llmbench bisect --good REV --bad REV --build 'CMD {rev} {out}' --config PROFILE`: finds the
// first commit of a range that made the profile slower, with the adaptive gate as the oracle
// (docs/ci.md, "Bisect"). The range is the first-parent chain good..bad (git rev-list); each
// tested commit is checked out into a worktree (git worktree add --detach) and built once by
// CMD, run by /bin/sh in that worktree with {rev} the full commit id, {out} the path the
// llmbench binary must be written to and {src} the worktree; builds are cached by commit under
// --work. Each step compares the commit's build with the good build by interleaved rounds until
// decided (`compare --run --rounds auto`, compare_sequential.h): "bad" when a --metric of some
// case is slower, "good" when all are the same or faster. The bad end is tested first; when it
// is not slower the answer is "no regression in range". Every step is stored in the gate
// database (bisect, bisect_step, and the gate tables), so an interrupted bisect run again with
// the same arguments resumes: commits already decided are not tested again.
// Exit codes: 0 the first bad commit was found, or no regression in range; 3 a step stayed
// undecided after --max-rounds (the range it narrowed to is printed); 2 bad input (a revision
// git does not know, a build that fails or writes no binary).
// `--find faster` looks for the commit that made a --metric faster instead (git bisect's
// old/new terms): a commit is "new" when some case's metric is faster than the good build's,
// "old" when none is; the answer is the first new commit, or "no speed-up in range".
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <map>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "engine/checkpoint/json_input.h"
#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/cli/metric_flags.h"
#include "tools/compare/compare_rounds.h"
#include "tools/compare/compare_sequential.h"
#include "tools/history/history_output.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

namespace fs = std::filesystem;

struct BisectOptions {
  std::string good, bad, build, config;
  std::string metrics = "ttft,tpot,e2e";
  std::string work = "llmbench-bisect";
  std::string db;  // default: WORK/bisect.db
  int max_rounds = 30;
  double alpha = 0.05, threshold_pct = 5.0;
  std::vector<std::string> sweep_args;
  std::uint64_t seed = 41;
  std::string find = "slower";  // slower | faster
  bool faster() const { return find == "faster"; }
  const char* changed() const { return faster() ? "new" : "bad"; }
  const char* unchanged() const { return faster() ? "old" : "good"; }
};

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command, returning its exit code and stdout (stderr to `log` when given).
std::pair<int, std::string> sh(const std::string& cmd, const std::string& log = "") {
  const std::string full = cmd + (log.empty() ? " 2>/dev/null" : " 2>>" + shell_quote(log));
  FILE* p = popen(full.c_str(), "r");
  if (!p) throw Error("cannot run: " + cmd);
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, out};
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string resolve(const std::string& rev, const char* flag) {
  const auto [rc, out] = sh("git rev-parse --verify --quiet " + shell_quote(rev + "^{commit}"));
  if (rc != 0 || trim(out).empty())
    throw BadInput(fmt::format("{}: '{}' is not a commit of this repository", flag, rev));
  return trim(out);
}

std::string subject(const std::string& sha) {
  return trim(sh("git log -1 --format=%s " + sha).second);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size()))
    s.replace(i, from.size(), to);
  return s;
}

// The llmbench binary of `sha`, built once (cached under WORK/builds/SHA/llmbench).
std::string build_of(const BisectOptions& o, const std::string& sha) {
  const fs::path dir = fs::absolute(fs::path(o.work) / "builds" / sha);
  const fs::path bin = dir / "llmbench";
  if (access(bin.c_str(), X_OK) == 0) return bin.string();
  fs::create_directories(dir);
  const fs::path src = fs::absolute(fs::path(o.work) / "src" / sha);
  const std::string log = (dir / "build.log").string();
  if (!fs::exists(src)) {
    fs::create_directories(src.parent_path());
    const auto [rc, out] = sh("git worktree add --detach " + shell_quote(src.string()) + " " + sha +
                              " >> " + shell_quote(log), log);
    if (rc != 0) throw BadInput(fmt::format("cannot check out {} into {} (log: {})", sha, src.string(), log));
  }
  std::string cmd = replace_all(o.build, "{rev}", sha);
  cmd = replace_all(cmd, "{out}", shell_quote(bin.string()));
  cmd = replace_all(cmd, "{src}", shell_quote(src.string()));
  fmt::print(stderr, "info: building {} ({})\n", sha.substr(0, 12), subject(sha));
  const auto [rc, out] = sh("cd " + shell_quote(src.string()) + " && (" + cmd + ") >> " + shell_quote(log), log);
  sh("git worktree remove --force " + shell_quote(src.string()));
  if (rc != 0)
    throw BadInput(fmt::format("--build failed for {} (exit {}; log: {})", sha, rc, log));
  if (access(bin.c_str(), X_OK) != 0)
    throw BadInput(fmt::format("--build wrote no executable {} for {} (log: {})", bin.string(), sha, log));
  return bin.string();
}

struct Step {
  std::string sha, verdict;  // bad | good | undecided
  int rounds = 0;
  std::int64_t gate_id = 0;
  nlohmann::json evidence = nlohmann::json::array();
  int step = 0;  // its number in bisect_step
};

// bad / good (--find slower) or new / old (--find faster), else undecided.
std::string verdict_of(const BisectOptions& o, const GateReport& r) {
  if (!o.faster()) return r.regressed() ? "bad" : r.inconclusive() ? "undecided" : "good";
  const CompareSummary& s = r.summary;
  if (s.faster > 0) return "new";
  const bool decided_all = s.too_few == 0 && s.same + s.slower + s.unknown > 0;
  return decided_all ? "old" : "undecided";
}

Step run_gate(const BisectOptions& o, const CompareSettings& settings, const std::string& db,
              const std::string& good_bin, const std::string& sha) {
  Step s;
  s.sha = sha;
  RoundsOptions ro;
  ro.base_bin = good_bin;
  ro.cand_bin = build_of(o, sha);
  ro.profile = o.config;
  ro.rounds = o.max_rounds;
  ro.extra_args = o.sweep_args;
  ro.db = db;
  ro.order_seed = o.seed;
  SequentialGate sequential(o.max_rounds, settings);
  ro.after_round = [&](const std::vector<GateRound>& r) { return sequential.after_round(r); };
  fmt::print(stderr, "info: comparing {} with the good build\n", sha.substr(0, 12));
  const RoundsResult rounds = run_rounds(ro);
  GateReport report = build_gate_report(rounds.rounds, settings);
  report.order_seed = o.seed;
  sequential.apply(report);
  store_gate_result(rounds.gate_db, rounds.gate_id, report);
  if (report.rounds_complete == 0)
    throw BadInput(fmt::format("no round of {} completed on both sides (log: {})", sha, rounds.log_path));
  s.gate_id = rounds.gate_id;
  s.rounds = report.rounds;
  s.verdict = verdict_of(o, report);
  for (const GateCase& c : report.cases)
    for (const PairedMetric& m : c.metrics)
      s.evidence.push_back({{"case", c.label}, {"metric", metric_info(m.metric).column},
                            {"verdict", verdict_name(m.verdict)},
                            {"ratio", m.ratio ? nlohmann::json(*m.ratio) : nlohmann::json(nullptr)},
                            {"ci_low", m.ci_low ? nlohmann::json(*m.ci_low) : nlohmann::json(nullptr)},
                            {"ci_high", m.ci_high ? nlohmann::json(*m.ci_high) : nlohmann::json(nullptr)}});
  return s;
}

void print_step(int n, const Step& s) {
  fmt::print("step {}: {} {:<9} ({} rounds)  {}\n", n, short_commit(s.sha), s.verdict, s.rounds,
             subject(s.sha));
  for (const auto& e : s.evidence)
    fmt::print("    {:<34} {:<8} {:<16} ratio {}\n", e["case"].get<std::string>(),
               e["metric"].get<std::string>(), e["verdict"].get<std::string>(),
               e["ratio"].is_null() ? std::string("n/a")
                                    : fmt::format("{:.3f} [{:.3f}, {:.3f}]", e["ratio"].get<double>(),
                                                  e["ci_low"].get<double>(), e["ci_high"].get<double>()));
}

int run_bisect(const BisectOptions& o) {
  if (o.max_rounds < 2 || o.max_rounds > 1000)
    throw BadInput(fmt::format("--max-rounds: expected 2 to 1000, got {}", o.max_rounds));
  CompareSettings settings;
  if (!(o.alpha > 0 && o.alpha < 1)) throw BadInput(fmt::format("--alpha: expected (0, 1), got {}", o.alpha));
  if (!(o.threshold_pct >= 0)) throw BadInput(fmt::format("--threshold: expected >= 0, got {}", o.threshold_pct));
  settings.alpha = o.alpha;
  settings.threshold = o.threshold_pct / 100.0;
  settings.metrics = parse_metrics("--metric", o.metrics);
  if (sh("git rev-parse --git-dir").first != 0)
    throw BadInput("bisect: the current directory is not inside a git repository");
  const std::string good = resolve(o.good, "--good"), bad = resolve(o.bad, "--bad");
  const auto [rc, list] = sh("git rev-list --first-parent --reverse " + good + ".." + bad);
  std::vector<std::string> commits;
  for (std::size_t i = 0; i < list.size();) {
    const std::size_t j = list.find('\n', i);
    const std::string c = list.substr(i, j - i);
    if (!c.empty()) commits.push_back(c);
    i = j == std::string::npos ? list.size() : j + 1;
  }
  if (rc != 0 || commits.empty() || commits.back() != bad)
    throw BadInput(fmt::format("--good {} is not an ancestor on the first-parent chain of --bad {}",
                               o.good, o.bad));
  fs::create_directories(o.work);
  const std::string db = o.db.empty() ? (fs::path(o.work) / "bisect.db").string() : o.db;
  ResultStore store(db);
  Db& d = store.db();

  // Resume: the latest bisect of the same range and settings, with its decided steps.
  std::int64_t id = 0;
  std::map<std::string, Step> known;
  int steps = 0;
  {
    auto q = d.prepare("SELECT id FROM bisect WHERE good = ? AND bad = ? AND build_cmd = ? AND"
                       " profile = ? AND metrics = ? AND find = ? ORDER BY id DESC LIMIT 1");
    q.bind(1, good).bind(2, bad).bind(3, o.build).bind(4, o.config).bind(5, o.metrics).bind(6, o.find);
    if (q.step()) id = q.column_int(0);
  }
  if (id == 0) {
    d.prepare("INSERT INTO bisect (started_at, good, bad, build_cmd, profile, metrics, find, status)"
              " VALUES (?,?,?,?,?,?,?,'running')")
        .bind(1, utc_now_iso8601()).bind(2, good).bind(3, bad).bind(4, o.build).bind(5, o.config)
        .bind(6, o.metrics).bind(7, o.find).run();
    id = d.last_insert_id();
  } else {
    auto q = d.prepare("SELECT commit_sha, verdict, rounds, gate_id, evidence, step FROM bisect_step"
                       " WHERE bisect_id = ? ORDER BY step");
    q.bind(1, id);
    while (q.step()) {
      ++steps;
      Step s{q.column_text(0), q.column_text(1), int(q.column_int(2)), q.column_int(3),
             parse_json_or_throw(q.column_text(4), "database '" + db + "': bisect_step.evidence"),
             int(q.column_int(5))};
      if (s.verdict != "undecided") known[s.sha] = s;
    }
    if (!known.empty())
      fmt::print(stderr, "info: resuming bisect {} in {}: {} commit(s) decided already\n", id, db,
                 known.size());
  }
  fmt::print("bisect {}..{}: {} commit(s), profile {}, metrics {}\n", short_commit(good),
             short_commit(bad), commits.size(), o.config, o.metrics);

  const std::string good_bin = build_of(o, good);
  auto test = [&](const std::string& sha) {
    if (auto it = known.find(sha); it != known.end()) {
      fmt::print("(decided before) ");
      print_step(it->second.step, it->second);
      return it->second;
    }
    Step s = run_gate(o, settings, db, good_bin, sha);
    ++steps;
    d.prepare("INSERT INTO bisect_step (bisect_id, step, commit_sha, gate_id, verdict, rounds,"
              " evidence) VALUES (?,?,?,?,?,?,?)")
        .bind(1, id).bind(2, steps).bind(3, sha).bind(4, s.gate_id).bind(5, s.verdict)
        .bind(6, s.rounds).bind(7, s.evidence.dump()).run();
    print_step(steps, s);
    std::cout.flush();
    return s;
  };
  auto finish = [&](const std::string& status, const std::string& first_bad) {
    auto st = d.prepare("UPDATE bisect SET status = ?, first_bad = ?, finished_at = ? WHERE id = ?");
    st.bind(1, status);
    if (first_bad.empty()) st.bind_null(2); else st.bind(2, first_bad);
    st.bind(3, utc_now_iso8601()).bind(4, id).run();
  };

  // The bad end first: is there a regression in the range at all?
  const Step end = test(bad);
  if (end.verdict == o.unchanged()) {
    fmt::print("no {} in range {}..{} ({} is not {} than {})\n",
               o.faster() ? "speed-up" : "regression", short_commit(good), short_commit(bad),
               short_commit(bad), o.find, short_commit(good));
    finish("none", "");
    return 0;
  }
  if (end.verdict == "undecided") {
    fmt::print("undecided: {} could not be told from {} within --max-rounds {}\n", short_commit(bad),
               short_commit(good), o.max_rounds);
    finish("undecided", "");
    return 3;
  }
  // commits[lo] is good (lo = -1: the good end), commits[hi] is bad.
  long lo = -1, hi = long(commits.size()) - 1;
  while (hi - lo > 1) {
    const long mid = lo + (hi - lo) / 2;
    const Step s = test(commits[std::size_t(mid)]);
    if (s.verdict == "undecided") {
      fmt::print("undecided at {}: the first {} commit lies in {}..{}\n",
                 short_commit(commits[std::size_t(mid)]), o.changed(),
                 short_commit(lo < 0 ? good : commits[std::size_t(lo)]),
                 short_commit(commits[std::size_t(hi)]));
      finish("undecided", "");
      return 3;
    }
    (s.verdict == o.changed() ? hi : lo) = mid;
  }
  const std::string& first = commits[std::size_t(hi)];
  fmt::print("first {} commit: {} {}\n", o.faster() ? "faster" : "bad", first, subject(first));
  finish("found", first);
  return 0;
}

}  // namespace

void add_bisect_command(CLI::App& root, CommandContext& ctx) {
  auto o = std::make_shared<BisectOptions>();
  CLI::App* cmd = root.add_subcommand(
      "bisect", "Find the first commit of a range that made a profile slower: builds each tested "
                "commit once and compares it with the good build by the adaptive gate");
  cmd->footer("Examples:\n  llmbench bisect --good v0.3 --bad HEAD --config profiles/ci-smoke.toml "
              "--build 'cmake -S {src} -B {src}/b -DLLMBENCH_BUILD_TESTS=OFF && cmake --build "
              "{src}/b --target llmbench && cp {src}/b/tools/llmbench {out}'\n  llmbench bisect "
              "--good HEAD~20 --bad HEAD --config ci-smoke --metric tpot --build 'make -C {src} "
              "llmbench && cp {src}/llmbench {out}'   (run again to resume)");
  cmd->add_option("--good", o->good, "A commit without the change (the regression, or with --find faster the speed-up)")->required();
  cmd->add_option("--bad", o->bad, "A later commit with it")->required();
  cmd->add_option("--build", o->build,
                  "Shell command that builds llmbench at {rev} (full commit id) from the worktree "
                  "{src} (also the working directory) and writes the binary to {out}")
      ->required();
  cmd->add_option("--config", o->config, "The profile both builds sweep")->required();
  cmd->add_option("--metric", o->metrics, "Metrics whose slowdown makes a commit bad")
      ->capture_default_str();
  cmd->add_option("--work", o->work, "Builds (cached by commit) and the default database go here")
      ->capture_default_str();
  cmd->add_option("--db", o->db, "The gate database (default: WORK/bisect.db)");
  cmd->add_option("--max-rounds", o->max_rounds, "Most rounds of each step's gate")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "The gate's alpha")->capture_default_str();
  cmd->add_option("--threshold", o->threshold_pct,
                  "Smallest slowdown that counts, percent (also the equivalence margin)")
      ->capture_default_str();
  cmd->add_option("--sweep-arg", o->sweep_args, "An extra flag for both sides' `sweep` (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--find", o->find,
                  "slower: the first commit that made a --metric slower; faster: the first that "
                  "made one faster")
      ->check(CLI::IsMember({"slower", "faster"}))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the A/B order of every step")->capture_default_str();
  cmd->callback([o, &ctx] { ctx.exit_code = run_bisect(*o); });
}

}  // namespace llmbench
