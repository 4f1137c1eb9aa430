// Identities for resumable sweeps: a case key names a case's full configuration (everything
// that changes what is measured), and a plan key names the ordered set of cases a run executes
// (with its shard). `--resume` finds the run with the same plan key and skips the cases whose
// keys it has stored.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/bench/bench_case.h"

namespace llmbench {

// "model=small;dtype=fp32;backend=cpu;batch=16;prompt=128;gen=1;...": readable and stable.
std::string case_key(const CaseSpec& spec);

// A hex digest of the case keys in order plus the shard ("" when not sharded).
std::string plan_key(const std::vector<std::string>& case_keys, const std::string& shard);

// FNV-1a, 64 bits: stable across builds and machines (std::hash is not).
std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = 0xcbf29ce484222325ull);

}  // namespace llmbench
