// The interleaved runner of `llmbench compare --run BASE_BIN CAND_BIN --config PROFILE`: runs
// the two llmbench binaries as child processes (posix_spawn), round after round, each round
// both sides back to back in a randomised order, each side appending one run per round to its
// own result database (so a base built from an older schema never writes into the head's),
// then reads every run back (tools/store/run_reader.h) and records the gate in one database: which run
// of which side ran in which round and position, and every repetition's samples by round.
// Not here: the statistics and the verdicts (compare_gate.h), printing (tools/report).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/compare/compare_gate.h"

namespace llmbench {

struct RoundsOptions {
  std::string base_bin, cand_bin;
  std::string profile;              // a profile file (or a name each binary resolves itself)
  int rounds = 10;                  // the rounds to run; with after_round, the most
  std::optional<int> repeat;        // --repeat passed to both sides, overriding the profile
  std::optional<int> warmup;        // --warmup likewise
  std::vector<std::string> extra_args;  // more flags for both sides' `sweep`
  std::string db;                   // the gate database (required); side databases and log beside it
  std::uint64_t order_seed = 0;     // seeds the A/B order of the rounds
  // Called before each side starts: "round 3/10: cand (1st)".
  std::function<void(const std::string&)> progress;
  // Called after each round with every round so far (the sequential gate,
  // compare_sequential.h); returning false ends the gate there. Unset: all `rounds` run.
  std::function<bool(const std::vector<GateRound>&)> after_round;
};

struct SideRun {
  int round = 0;       // 1-based
  bool base = true;    // which side
  int position = 0;    // 0: ran first in its round
  int exit_code = 0;   // the child's; 128 + N when killed by signal N
  double wall_s = 0;
  std::optional<LoadedRun> run;  // read back when the child exited 0 or 1
};

struct RoundsResult {
  std::string gate_db, base_db, cand_db, log_path;
  std::int64_t gate_id = 0;
  std::vector<SideRun> runs;        // in execution order
  std::vector<GateRound> rounds;    // pointing into `runs`
  double wall_s = 0;                // the whole gate
};

// The randomised order: true when the base runs first in round r (0-based). A fixed,
// platform-independent function of the seed: each round draws one bit of std::mt19937_64.
std::vector<bool> round_orders(int rounds, std::uint64_t seed);

// The side databases beside the gate database: "x.db" -> "x.base.db", "x.cand.db".
std::string side_db_path(const std::string& gate_db, bool base);

// Runs every round. Throws BadInput when a binary is missing or not executable; a child that
// fails (exit code other than 0 and 1, or no run written) leaves its side empty for that
// round and is reported in the result, not thrown.
RoundsResult run_rounds(const RoundsOptions& o);

// Stores the gate's verdicts in the gate database (table gate_result), so the database holds
// the whole decision next to its samples.
void store_gate_result(const std::string& gate_db, std::int64_t gate_id, const GateReport& g);

}  // namespace llmbench
