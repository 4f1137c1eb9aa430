// The printed forms of `llmbench history check`: a table for terminals, Markdown for pull-request
// comments, JSON for bots (a list of change points, each with series, machine, commit (the first
// commit after the change), previous_commit, time, index, before, after, ratio, p_value,
// regression, recent). Not here: finding them (history_check.h).
#pragma once
#include <ostream>
#include <string>

#include "tools/history/history_check.h"

namespace llmbench {

// format: table | md | json.
void print_check(std::ostream& out, const std::string& format, const CheckResult& r,
                 const CheckOptions& o);

// Seven hex digits of a commit id ("abc1234"); anything else unchanged.
std::string short_commit(const std::string& commit);

}  // namespace llmbench
