// The traced serving section: for the latest `serve --db --trace steps|ops` session of a
// database, one request's waterfall (its wait in the queue, each engine step that ran a chunk
// of its prompt, each decode step) and under it the op breakdown of those same steps, stacked
// by op category, so "why was this request slow" is read from the client's latency down to the
// op. The request drawn is the one with the highest TTFT (the usual question); every number
// comes from the bundled request_breakdown query, as `llmbench query DB request_breakdown`
// prints it. Not here: the load run's sections (report_serving.cpp) or the per-op charts of
// `run` (report_ops.cpp).
#include "tools/report/report_section.h"

#include <algorithm>
#include <optional>

#include <fmt/core.h>

namespace llmbench::report {

namespace {

constexpr int kMaxSteps = 200;  // steps of one request drawn (a long generation: the first ones)

struct Traced {
  std::int64_t session = 0, request = 0;
  std::string level, x_request_id;
  double ttft_ms = 0;
};

// The latest traced session and its request with the highest TTFT.
std::optional<Traced> traced_request(Db& db) {
  if (!db.has_table("serve_step_request") || !columns_of(db, "serve_session").count("trace"))
    return std::nullopt;
  Stmt q = db.prepare(
      "SELECT ss.id, ss.trace, r.request_id, COALESCE(r.x_request_id, ''),"
      " (r.first_token_ns - r.arrival_ns) / 1e6 FROM serve_session ss"
      " JOIN serve_request r ON r.session_id = ss.id"
      " WHERE ss.trace IN ('steps', 'ops') AND r.first_token_ns IS NOT NULL"
      " AND EXISTS (SELECT 1 FROM serve_step_request m WHERE m.session_id = ss.id"
      "             AND m.request_id = r.request_id)"
      " ORDER BY ss.id DESC, r.first_token_ns - r.arrival_ns DESC, r.request_id LIMIT 1");
  if (!q.step()) return std::nullopt;
  return Traced{q.column_int(0), q.column_int(2), q.column_text(1), q.column_text(3),
                q.column_double(4)};
}

}  // namespace

json serve_steps_table(Db& db) {
  json t = {{"title", "Summary: the latest serve session's engine steps by kind (bundled query "
                      "serve_steps)"},
            {"columns", json::array()}, {"rows", json::array()}, {"flagged", json::array()}};
  std::vector<std::string> cols;
  const json rows = bundled_rows(db, "serve_steps", {}, &cols);
  for (const std::string& name : cols) t["columns"].push_back(name);
  for (const json& row : rows) {
    json out = json::array();
    for (const json& v : row) out.push_back(v.is_number_float() ? json(r4(v.get<double>())) : v);
    t["rows"].push_back(std::move(out));
  }
  return t;
}

bool serve_trace_section(Ctx& c, Db& db, const std::string& path, json& sections) {
  const std::optional<Traced> t = traced_request(db);
  if (!t) return false;  // no traced session: nothing to say (most databases have none)
  std::vector<std::string> cols;
  const json rows = bundled_rows(db, "request_breakdown",
                                 {{"session_id", std::to_string(t->session)},
                                  {"request_id", std::to_string(t->request)}},
                                 &cols);
  auto col = [&](const json& row, const char* name) -> json {
    const auto it = std::find(cols.begin(), cols.end(), name);
    return it == cols.end() ? json(nullptr) : row[std::size_t(it - cols.begin())];
  };
  const std::string who = "request " + std::to_string(t->request) +
                          (t->x_request_id.empty() ? "" : " (X-Request-Id " + t->x_request_id + ")");
  json s = section("serve_trace_section", "Served request " + std::to_string(t->request) +
                                              " down to the op: session " +
                                              std::to_string(t->session) + " of " + path);
  s["note"] = fmt::format(
      "The request with the highest TTFT ({:.2f} ms) of the latest traced session (--trace {}): "
      "{}. First its waterfall: the wait in the queue, each step that ran a chunk of its prompt, "
      "each decode step (ms since its arrival); under it, the same steps' time by op category "
      "(--trace ops) and outside the ops (scheduling, bookkeeping, the tracer). Numbers: "
      "`llmbench query {} request_breakdown --param request_id={}`.",
      t->ttft_ms, t->level, who, path, t->request);

  // The waterfall: one horizontal bar per phase, drawn as line segments (as the load timeline).
  json queue = json::array(), prefill = json::array(), decode = json::array(), trows = json::array();
  json labels = json::array();
  std::map<std::string, json> by_cat;  // category -> values per step
  const std::vector<std::pair<const char*, const char*>> cats = {
      {"gemm_ms", "gemm"}, {"attention_ms", "attention"}, {"norm_ms", "norm"},
      {"elementwise_ms", "elementwise"}, {"copy_ms", "copy"}, {"transfer_ms", "transfer"},
      {"sample_ms", "sample"}, {"outside_ops_ms", "outside the ops"}};
  int y = 0, drawn_steps = 0, steps = 0;
  bool any_ops = false;
  for (const json& row : rows) {
    const std::string role = col(row, "role").get<std::string>();
    const json start = col(row, "start_ms"), dur = col(row, "dur_ms");
    if (!start.is_number() || !dur.is_number()) continue;
    if (role != "queue" && ++steps > kMaxSteps) continue;
    const double a = start.get<double>(), b = a + dur.get<double>();
    ++y;
    json& ds = role == "queue" ? queue : role == "prefill" ? prefill : decode;
    ds.push_back({{"x", r4(a)}, {"y", y}});
    ds.push_back({{"x", r4(b)}, {"y", y}});
    ds.push_back({{"x", r4(b)}, {"y", nullptr}});
    trows.push_back({role, col(row, "step"), r4(a), r4(dur.get<double>()), col(row, "tokens"),
                     col(row, "other_requests"), col(row, "others"), col(row, "top_op")});
    if (role == "queue") continue;
    ++drawn_steps;
    labels.push_back(fmt::format("{} {}", role == "prefill" ? "P" : "D",
                                 col(row, "step").get<std::int64_t>()));
    for (const auto& [name, cat] : cats) {
      const json v = col(row, name);
      if (v.is_number() && std::string(name) != "outside_ops_ms") any_ops = true;
      by_cat[cat].push_back(v.is_number() ? json(r4(v.get<double>())) : json(0));
    }
  }
  if (trows.empty()) {
    c.omitted.push_back("Served request waterfall: request " + std::to_string(t->request) +
                        " has no traced steps.");
    return false;
  }
  json ds = json::array();
  auto add = [&](json& data, const char* label, const char* color) {
    if (data.empty()) return;
    ds.push_back({{"label", label}, {"data", std::move(data)}, {"color", color},
                  {"pointRadius", 0}, {"borderWidth", 6}, {"spanGaps", false}});
  };
  add(queue, "queue (arrival -> first step)", "#ff7f0e");
  add(prefill, "prefill chunk steps", "#2ca02c");
  add(decode, "decode steps", "#1f77b4");
  json yax = axis("phase (in order)");
  yax["reverse"] = true;
  const std::string bounded = steps > kMaxSteps ? fmt::format(" (the first {} of its {} steps)",
                                                              kMaxSteps, steps)
                                                : "";
  json water = chart("serve_trace_waterfall", "Waterfall of " + who + bounded, "line", ds,
                     {{"x", axis("ms since the request arrived")}, {"y", yax}},
                     {"role", "step", "start_ms", "dur_ms", "tokens", "other requests",
                      "others (id + p prompt chunk / d decode row)", "top op"},
                     trows);
  water["height"] = 380;
  s["charts"].push_back(std::move(water));

  if (any_ops) {
    json bars = json::array();
    json brows = json::array();
    for (const auto& [name, cat] : cats)
      bars.push_back({{"label", cat}, {"data", by_cat[cat]}});
    for (std::size_t i = 0; i < labels.size(); ++i) {
      json r = json::array({labels[i]});
      for (const auto& [name, cat] : cats) r.push_back(by_cat[cat][i]);
      brows.push_back(std::move(r));
    }
    json header = json::array({"step"});
    for (const auto& [name, cat] : cats) header.push_back(std::string(cat) + " (ms)");
    json ops = chart("serve_trace_ops", "Where those steps' time went, by op category (P: a "
                                        "prompt chunk of the request, D: its decode row)",
                     "bar", bars, {{"x", axis("engine step", "category")},
                                   {"y", axis("ms in the step")}},
                     header, brows);
    ops["config"]["data"]["labels"] = labels;
    ops["config"]["options"]["scales"]["x"]["stacked"] = true;
    ops["config"]["options"]["scales"]["y"]["stacked"] = true;
    ops["height"] = 380;
    s["charts"].push_back(std::move(ops));
  } else {
    c.omitted.push_back("Served request op breakdown: the session was traced with --trace steps "
                        "(steps only); --trace ops records the ops inside each step.");
  }
  sections.push_back(std::move(s));
  return true;
}

}  // namespace llmbench::report
