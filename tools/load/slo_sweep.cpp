// The SLO frontier search (see slo_sweep.h).
#include "tools/load/slo_sweep.h"

#include <fmt/core.h>

#include <cmath>
#include <limits>

namespace llmbench {

namespace {

class Search {
 public:
  Search(const SloSearchOptions& o, const SloMeasure& m) : o_(o), measure_(m) {}

  // Runs one level; false when the budget is spent or the sweep must stop.
  bool probe(double rate, const char* role, bool* met) {
    if (int(f_.probes.size()) >= o_.max_levels) {
      f_.note = fmt::format("stopped at the --sweep-max-levels bound ({} levels)", o_.max_levels);
      return false;
    }
    const auto r = measure_(rate, role);
    if (!r) {
      f_.note = "stopped before the search ended (interrupted, or the server stopped)";
      return false;
    }
    SloProbe p{rate, role, r->first, r->second, r->first >= o_.target};
    f_.probes.push_back(p);
    *met = p.met;
    return true;
  }

  SloFrontier run() {
    bool met = false;
    if (!probe(std::numeric_limits<double>::infinity(), "throughput", &met)) return f_;
    if (met) {
      f_.rate = std::numeric_limits<double>::infinity();
      f_.converged = true;
      f_.note = "the target was met with every request sent at once";
      return f_;
    }
    const double x = f_.probes.back().request_throughput;
    if (!(x > 0)) {
      f_.note = "no request succeeded at the throughput level: no rate to start from";
      return f_;
    }
    if (!bracket(x) || !bisect()) return f_;
    f_.converged = true;
    f_.note = fmt::format("converged: {:.4g} - {:.4g} <= {:g} x {:.4g}", *f_.failed_rate, *f_.rate,
                          o_.tolerance, *f_.failed_rate);
    return f_;
  }

 private:
  // Finds lo (met) < hi (failed) starting at rate x, doubling up or halving down.
  bool bracket(double x) {
    bool met = false;
    if (!probe(x, "probe", &met)) return false;
    double r = x;
    if (met) {
      f_.rate = r;
      while (met) {
        r *= 2;
        if (!probe(r, "probe", &met)) return false;
        if (met) f_.rate = r;
      }
      f_.failed_rate = r;
    } else {
      f_.failed_rate = r;
      while (!met) {
        r /= 2;
        if (!probe(r, "probe", &met)) return false;
        if (!met) f_.failed_rate = r;
      }
      f_.rate = r;
    }
    return true;
  }

  bool bisect() {
    while (*f_.failed_rate - *f_.rate > o_.tolerance * *f_.failed_rate) {
      const double mid = (*f_.rate + *f_.failed_rate) / 2;
      bool met = false;
      if (!probe(mid, "probe", &met)) return false;
      (met ? f_.rate : f_.failed_rate) = mid;
    }
    return true;
  }

  const SloSearchOptions& o_;
  const SloMeasure& measure_;
  SloFrontier f_;
};

}  // namespace

SloFrontier search_slo_frontier(const SloSearchOptions& options, const SloMeasure& measure) {
  return Search(options, measure).run();
}

std::string frontier_text(const SloFrontier& f, double target, const std::string& slo,
                          const std::string& unit) {
  std::string s;
  if (!f.rate) s = "SLO frontier: no rate met";
  else if (std::isinf(*f.rate)) s = "SLO frontier: every rate met (inf)";
  else s = fmt::format("SLO frontier: {:.3f} {}", *f.rate, unit);
  s += fmt::format(" (good requests >= {:.2f} of requests at {})", target, slo);
  if (f.failed_rate) s += fmt::format("; {:.3f} {} failed", *f.failed_rate, unit);
  s += fmt::format("; {} level{}; {}", f.probes.size(), f.probes.size() == 1 ? "" : "s", f.note);
  return s;
}

}  // namespace llmbench
