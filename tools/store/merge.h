// `llmbench merge A.db B.db ... -o ALL.db`: joins result databases (e.g. the shards of a
// sweep) into one. Every id is shifted past the output's largest, so nothing collides and
// every reference (run_id, case_id, upid, utid, track_id, parent_id, arg_set_id, flows) still
// points at its own rows. Inputs must have exactly this llmbench's schema version; the whole
// merge is one transaction, so a failure leaves the output as it was (or absent).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace llmbench {

struct MergedInput {
  std::string path;
  std::int64_t runs = 0, imports = 0, cases = 0, events = 0, load_runs = 0;
};

// Throws BadInput naming the file for a missing input, a non-llmbench database, a schema
// version other than this llmbench's, an input equal to the output, or an output of another
// schema version.
std::vector<MergedInput> merge_databases(const std::vector<std::string>& inputs,
                                         const std::string& output);

// Tables every database has that merge never copies (history and bisections: a history is one
// database `llmbench history add` appends to); an input with rows in them is refused.
std::vector<std::string> unmerged_tables();
// The tables merge knows how to copy, in copy order (parents first); a test checks that every
// table of a fresh store is among them or among unmerged_tables().
std::vector<std::string> mergeable_tables();

}  // namespace llmbench
