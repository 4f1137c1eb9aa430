// The `llmbench load` driver (see load_driver.h): the plan, the session (load_session.h), the
// sweep over the plan's levels, the exit code.
#include "tools/load/load_driver.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "tools/console/build_warning.h"
#include "tools/console/signals.h"
#include "tools/load/load_session.h"
#include "tools/load/slo_sweep.h"
#include "tools/load/sweep_store.h"

namespace llmbench {

namespace {

// The plan's levels, in order.
int run_list_sweep(const LoadPlan& plan, LoadSession& session) {
  std::vector<LevelResult> results;
  for (const LevelSpec& level : plan.levels) {
    auto r = session.measure(level, fmt::format("[{}/{}]", level.index + 1, plan.levels.size()));
    if (!r) break;
    results.push_back(std::move(*r));
    if (session.server_died()) break;
  }
  return session.finish(results, int(plan.levels.size()));
}

// The SLO frontier search (slo_sweep.h): each probe is a rate level of the plan's workload.
// The rate counts arrivals: requests, or sessions of a multi-turn workload, whose throughput
// the search then reads as requests/s over the mean turns per session.
int run_slo_sweep(const LoadPlan& plan, LoadSession& session) {
  const LoadOptions& o = plan.opt;
  std::vector<LevelResult> results;
  const SloSearchOptions so{o.goodput_target, o.sweep_tolerance, o.sweep_max_levels};
  const double per_arrival = session.requests_per_arrival();
  const std::string unit = per_arrival != 1 ? "sessions/s" : "req/s";
  const SloMeasure measure = [&](double rate, const std::string& role)
      -> std::optional<std::pair<double, double>> {
    if (session.server_died()) return std::nullopt;
    LevelSpec level = plan.slo_level;
    level.index = int(results.size());
    level.request_rate = rate;
    auto r = session.measure(level, fmt::format("[slo {}/<={}]", level.index + 1, so.max_levels), role);
    if (!r) return std::nullopt;
    results.push_back(std::move(*r));
    const LevelSummary& s = results.back().summary;
    // Over capacity is failed, whatever the requests before the queue grew achieved.
    const double good = results.back().over_capacity.value_or(false) ? 0.0 : s.good_fraction.value_or(0.0);
    return std::make_pair(good, s.request_throughput / per_arrival);
  };
  const SloFrontier f = search_slo_frontier(so, measure);
  store_slo_frontier(session.store().db(), session.run_id(), f.rate);
  const std::string line = frontier_text(f, so.target, goodput_text(plan.goodput), unit);
  session.note(line);
  nlohmann::ordered_json extra;
  auto rate_json = [](std::optional<double> r) {
    if (!r) return nlohmann::ordered_json(nullptr);
    return std::isinf(*r) ? nlohmann::ordered_json("inf") : nlohmann::ordered_json(*r);
  };
  extra["slo_frontier"] = {{"rate", rate_json(f.rate)},
                           {"failed_rate", rate_json(f.failed_rate)},
                           {"unit", unit},
                           {"goodput_target", so.target},
                           {"tolerance", so.tolerance},
                           {"converged", f.converged},
                           {"levels", f.probes.size()},
                           {"note", f.note}};
  return session.finish(results, int(results.size()), line, extra);
}

}  // namespace

std::string request_body(const std::string& model, bool chat, bool token_ids,
                         const std::vector<std::int32_t>& prompt_ids, int max_tokens,
                         bool ignore_eos, bool stream) {
  nlohmann::ordered_json j;
  if (!model.empty()) j["model"] = model;
  if (chat) {
    j["messages"] = nlohmann::json::array(
        {{{"role", "user"}, {"content", synthetic_text(prompt_ids)}}});
  } else if (token_ids) {
    j["prompt"] = prompt_ids;
  } else {
    j["prompt"] = synthetic_text(prompt_ids);
  }
  j["max_tokens"] = max_tokens;
  j["stream"] = stream;
  if (stream) j["stream_options"] = {{"include_usage", true}};
  if (ignore_eos) j["ignore_eos"] = true;
  return j.dump();
}

int run_load(const LoadOptions& options, const std::string& command_line) {
  const LoadPlan plan = make_load_plan(options);
  warn_if_debug_build();  // a -O0 client's own stamps would be slower too
  // Ctrl-C from here on interrupts cooperatively (the first level then stops at once), so a
  // server we started is always stopped; it runs in its own process group and does not get
  // the terminal's SIGINT itself.
  const ScopedInterruptHandler interrupts;
  LoadSession session(plan, command_line);
  return plan.slo_sweep ? run_slo_sweep(plan, session) : run_list_sweep(plan, session);
}

}  // namespace llmbench
