// Google Benchmark JSON export (see export_gbench.h). The field set is what Google Benchmark's
// JSON reporter writes and its tools/gbench (util.py, report.py) reads: name, run_name,
// run_type, family_index, per_family_instance_index, repetitions, repetition_index, threads,
// iterations, real_time, cpu_time, time_unit; the context's keys as the reporter writes them.
#include "tools/export_gbench.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "kernels/common/error.h"
#include "tools/cli_values.h"

namespace llmbench {

std::string gbench_name(const CaseSamples& c, Metric m) {
  std::string name = c.label();
  std::replace(name.begin(), name.end(), ' ', '/');
  return name + "/" + metric_info(m).name;
}

nlohmann::ordered_json gbench_json(const LoadedRun& loaded, const std::vector<Metric>& metrics) {
  using nlohmann::ordered_json;
  const RunRow& run = loaded.run;
  std::string build_type = run.build_type;
  std::transform(build_type.begin(), build_type.end(), build_type.begin(),
                 [](unsigned char ch) { return char(std::tolower(ch)); });
  // Not recorded by llmbench, so not claimed: clock (mhz_per_cpu 0), frequency scaling
  // (false), caches and load average (empty). num_cpus is the thread count the run used.
  ordered_json context = {
      {"date", run.started_at},
      {"host_name", run.host},
      {"executable", "llmbench"},
      {"num_cpus", run.threads},
      {"mhz_per_cpu", 0},
      {"cpu_scaling_enabled", false},
      {"caches", ordered_json::array()},
      {"load_avg", ordered_json::array()},
      {"library_build_type", build_type},
      {"json_schema_version", 1},
      {"llmbench", {{"db", loaded.path},
                    {"run_id", run.id},
                    {"llmbench_version", run.llmbench_version},
                    {"git_commit", run.git_commit},
                    {"cpu", run.cpu},
                    {"gpu", run.gpu},
                    {"driver", run.driver},
                    {"command_line", run.command_line}}}};

  ordered_json benchmarks = ordered_json::array();
  std::map<std::string, int> seen;  // a configuration repeated within the run gets "/dupN"
  int family = 0;
  for (const CaseSamples& c : loaded.cases) {
    if (!c.ok()) continue;
    for (Metric m : metrics) {
      const auto samples = c.samples(m);
      if (!samples || samples->empty()) continue;
      std::string name = gbench_name(c, m);
      if (const int n = ++seen[name]; n > 1) name += "/dup" + std::to_string(n);
      for (std::size_t i = 0; i < samples->size(); ++i)
        benchmarks.push_back({{"name", name},
                              {"family_index", family},
                              {"per_family_instance_index", 0},
                              {"run_name", name},
                              {"run_type", "iteration"},
                              {"repetitions", samples->size()},
                              {"repetition_index", i},
                              {"threads", c.threads},
                              {"iterations", 1},
                              {"real_time", (*samples)[i]},
                              {"cpu_time", (*samples)[i]},
                              {"time_unit", "ms"}});
      ++family;
    }
  }
  return {{"context", context}, {"benchmarks", benchmarks}};
}

namespace {

struct GbenchOptions {
  std::string db;
  std::int64_t run_id = 0;  // 0: the latest run
  std::string metrics = "ttft,tpot,e2e";
  std::string output;
};

// Only times fit Google Benchmark's rows; "all" means every time metric.
std::vector<Metric> time_metrics(const std::string& text) {
  std::vector<Metric> out;
  for (Metric m : parse_metrics("--metric", text)) {
    if (!metric_info(m).higher_is_better) {
      out.push_back(m);
    } else if (text.find(metric_info(m).name) != std::string::npos) {
      throw BadInput(std::string("--metric: ") + metric_info(m).name +
                     " is not a time; Google Benchmark's format holds ttft, tpot and e2e");
    }
  }
  return out;
}

// Writes next to the target and renames, so a failure leaves no half-written file.
void write_atomically(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw BadInput("-o: cannot write '" + path + "'");
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      throw Error("-o: writing '" + path + "' failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw BadInput("-o: cannot write '" + path + "' (" + ec.message() + ")");
  }
}

int run_export_gbench(const GbenchOptions& o) {
  const std::vector<Metric> metrics = time_metrics(o.metrics);
  if (o.run_id < 0) throw BadInput("--run: expected a run id >= 1");
  SideSpec spec{o.db, std::nullopt};
  if (o.run_id > 0) spec.run_id = o.run_id;
  const LoadedRun run = load_run(spec, "DB");
  const auto doc = gbench_json(run, metrics);
  write_atomically(o.output, doc.dump(2) + "\n");
  if (o.output != "-")
    fmt::print(stderr, "wrote {} rows ({} benchmarks) of run {} to {}\n", doc["benchmarks"].size(),
               doc["benchmarks"].empty() ? 0 : doc["benchmarks"].back()["family_index"].get<int>() + 1,
               run.run.id, o.output);
  return 0;
}

}  // namespace

void add_export_gbench(CLI::App* export_cmd, CommandContext& ctx) {
  auto o = std::make_shared<GbenchOptions>();
  CLI::App* cmd = export_cmd->add_subcommand(
      "gbench", "Per-repetition samples of one run as Google Benchmark JSON (for its compare.py)");
  cmd->add_option("db", o->db, "Result database written by llmbench run (opened read-only)")
      ->required();
  cmd->add_option("--run", o->run_id, "Run id (default: the latest run)");
  cmd->add_option("--metric", o->metrics, "Comma-separated time metrics: ttft, tpot, e2e, or all")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Output JSON file ('-' for stdout)")->required();
  cmd->callback([o, &ctx] { ctx.exit_code = run_export_gbench(*o); });
}

}  // namespace llmbench
