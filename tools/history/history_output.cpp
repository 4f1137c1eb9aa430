// Printing `history check` (see history_output.h).
#include "tools/history/history_output.h"

#include <algorithm>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace llmbench {

std::string short_commit(const std::string& c) {
  const bool hex = !c.empty() && std::all_of(c.begin(), c.end(), [](char ch) {
    return std::isxdigit(static_cast<unsigned char>(ch)) != 0;
  });
  return hex && c.size() > 7 ? c.substr(0, 7) : c;
}

namespace {

std::string flag_of(const ChangePointReport& c) {
  if (!c.regression) return "improvement";
  return c.recent ? "REGRESSION (recent)" : "regression";
}

std::string ratio_text(double r) { return fmt::format("{:.3f}", r); }

}  // namespace

void print_check(std::ostream& out, const std::string& format, const CheckResult& r,
                 const CheckOptions& o) {
  if (format == "json") {
    nlohmann::json a = nlohmann::json::array();
    for (const ChangePointReport& c : r.change_points)
      a.push_back({{"series", c.series}, {"machine", c.machine}, {"commit", c.commit},
                   {"previous_commit", c.previous_commit}, {"time", c.time}, {"index", c.index},
                   {"before", c.before}, {"after", c.after}, {"ratio", c.ratio},
                   {"p_value", c.p_value}, {"points_before", c.points_before},
                   {"points_after", c.points_after}, {"higher_is_better", c.higher_is_better},
                   {"regression", c.regression}, {"recent", c.recent}});
    out << a.dump(2) << "\n";
    return;
  }
  const std::string summary = fmt::format(
      "{} series, {} points: {} change point(s); E-divisive means, permutation test p <= {:g} "
      "({} permutations), segments of >= {} points; a regression fails the check in the newest {} "
      "commit(s)",
      r.series, r.points, r.change_points.size(), o.detector.max_p, o.detector.permutations,
      o.detector.min_size, o.recent);
  if (format == "md") {
    out << "**History check:** " << summary << "\n\n";
    if (r.change_points.empty()) return;
    out << "| series | machine | commits | before | after | ratio | p | |\n"
           "|---|---|---|---:|---:|---:|---:|---|\n";
    for (const ChangePointReport& c : r.change_points)
      out << fmt::format("| {} | {} | {}..{} | {:.4g} | {:.4g} | {} | {:.3f} | {} |\n", c.series,
                         c.machine, short_commit(c.previous_commit), short_commit(c.commit),
                         c.before, c.after, ratio_text(c.ratio), c.p_value,
                         c.regression ? "**" + flag_of(c) + "**" : flag_of(c));
    return;
  }
  out << summary << "\n";
  if (r.change_points.empty()) return;
  std::size_t w = 6;
  for (const ChangePointReport& c : r.change_points) w = std::max(w, c.series.size());
  out << fmt::format("{:<{}}  {:<17}  {:>10}  {:>10}  {:>6}  {:>5}  {}\n", "series", w, "commits",
                     "before", "after", "ratio", "p", "");
  for (const ChangePointReport& c : r.change_points)
    out << fmt::format("{:<{}}  {:<17}  {:>10.4g}  {:>10.4g}  {:>6}  {:>5.3f}  {}\n", c.series, w,
                       short_commit(c.previous_commit) + ".." + short_commit(c.commit), c.before,
                       c.after, ratio_text(c.ratio), c.p_value, flag_of(c));
}

}  // namespace llmbench
