// Google Benchmark JSON export (see export_gbench.h). The field set is what Google Benchmark's
// JSON reporter writes and its tools/gbench (util.py, report.py) reads: name, run_name,
// run_type, family_index, per_family_instance_index, repetitions, repetition_index, threads,
// iterations, real_time, cpu_time, time_unit; the context's keys as the reporter writes them.
#include "tools/trace_io/export_gbench.h"


#include <algorithm>
#include <cctype>
#include <map>

#include "kernels/common/error.h"
#include "tools/compare/compare_verdict.h"

namespace llmbench {

std::string gbench_name(const CaseSamples& c, Metric m) {
  std::string name = c.label();
  std::replace(name.begin(), name.end(), ' ', '/');
  return name + "/" + metric_info(m).name;
}

nlohmann::ordered_json gbench_json(const LoadedRun& loaded, const std::vector<Metric>& metrics) {
  using nlohmann::ordered_json;
  const RunInfo& run = loaded.run;
  std::string build_type = run.build_type;
  std::transform(build_type.begin(), build_type.end(), build_type.begin(),
                 [](unsigned char ch) { return char(std::tolower(ch)); });
  // Only what the run recorded. Google Benchmark's machine fields (num_cpus, mhz_per_cpu,
  // cpu_scaling_enabled, caches, load_avg) describe the machine at run time, which llmbench does
  // not measure, so they are left out rather than guessed (its compare.py reads only
  // "benchmarks"); the thread count the run used is under "llmbench".
  ordered_json context = {
      {"date", run.started_at},
      {"host_name", run.host},
      {"executable", "llmbench"},
      {"library_build_type", build_type},
      {"json_schema_version", 1},
      {"llmbench", {{"db", loaded.path},
                    {"run_id", run.id},
                    {"llmbench_version", run.version},
                    {"git_commit", run.git_commit},
                    {"cpu", run.cpu},
                    {"threads", run.threads},
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

}  // namespace llmbench
