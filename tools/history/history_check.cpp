// Change points of history series (see history_check.h).
#include "tools/history/history_check.h"

#include <cmath>
#include <set>

#include "engine/bench/stats.h"

namespace llmbench {

bool CheckResult::failed() const {
  for (const ChangePointReport& c : change_points)
    if (c.regression && c.recent) return true;
  return false;
}

std::vector<ChangePointReport> check_series(const HistorySeries& s, const CheckOptions& o) {
  std::vector<ChangePointReport> out;
  std::vector<double> x;
  for (const HistoryPoint& p : s.points) x.push_back(p.value);
  if (x.size() < std::size_t(2 * o.detector.min_size)) return out;
  const std::vector<ChangePoint> cps = e_divisive(x, o.detector);
  // The `recent` newest distinct commits, counted from the end.
  std::set<std::string> newest;
  for (std::size_t i = s.points.size(); i-- > 0 && int(newest.size()) < o.recent;)
    newest.insert(s.points[i].commit);
  const bool hib = s.key.higher_is_better.value_or(o.higher_is_better);
  for (std::size_t k = 0; k < cps.size(); ++k) {
    const int begin = k == 0 ? 0 : cps[k - 1].index;
    const int cut = cps[k].index;
    const int end = k + 1 == cps.size() ? int(x.size()) : cps[k + 1].index;
    ChangePointReport r;
    r.series = s.key.name();
    r.machine = s.key.machine();
    r.index = cut;
    r.commit = s.points[std::size_t(cut)].commit;
    r.previous_commit = s.points[std::size_t(cut - 1)].commit;
    r.time = s.points[std::size_t(cut)].time;
    r.before = median(std::vector<double>(x.begin() + begin, x.begin() + cut));
    r.after = median(std::vector<double>(x.begin() + cut, x.begin() + end));
    r.ratio = r.before != 0 ? r.after / r.before : (r.after == 0 ? 1.0 : INFINITY);
    r.p_value = cps[k].p_value;
    r.points_before = cut - begin;
    r.points_after = end - cut;
    r.higher_is_better = hib;
    if (std::fabs(r.ratio - 1.0) < o.min_change) continue;
    r.regression = hib ? r.ratio < 1.0 : r.ratio > 1.0;
    r.recent = newest.count(r.commit) > 0;
    out.push_back(std::move(r));
  }
  return out;
}

CheckResult check_history(const std::vector<HistorySeries>& all, const CheckOptions& o) {
  CheckResult res;
  for (const HistorySeries& s : all) {
    ++res.series;
    res.points += int(s.points.size());
    auto cps = check_series(s, o);
    res.change_points.insert(res.change_points.end(), cps.begin(), cps.end());
  }
  return res;
}

}  // namespace llmbench
