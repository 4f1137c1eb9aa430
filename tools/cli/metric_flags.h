// The --metric flag of `compare` and `export gbench`: words to compare metrics
// (tools/compare/compare_verdict.h names them).
#pragma once
#include <string>
#include <vector>

#include "tools/compare/compare_verdict.h"

namespace llmbench {

// "ttft,tpot" or "all" -> metrics in the order given (duplicates removed). Throws BadInput
// naming `flag` for an unknown or empty word.
std::vector<Metric> parse_metrics(const std::string& flag, const std::string& text);

}  // namespace llmbench
