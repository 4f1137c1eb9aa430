// A parser for the Prometheus text exposition format (version 0.0.4), the format of every
// serving engine's /metrics: vLLM, SGLang, TGI, llama.cpp's server and llmbench's own. It reads
// the grammar, not a list of known names: `# HELP name text` and `# TYPE name type` lines (other
// comments skipped), and samples `name{label="value",...} value [timestamp_ms]` with the
// format's escapes (\\, \" and \n in label values; \\ and \n in help text), NaN and +/-Inf,
// spaces or tabs between tokens, an optional trailing comma in the label set. A malformed line
// is refused on its own (with its line number and the reason) and the rest still parsed.
// Not here: HTTP (metrics_scrape.h) or what any metric means (queries/load_latency_vs_server.sql).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench {

struct PromSample {
  std::string name;                                         // "vllm:num_requests_running"
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written, unescaped
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;                 // when the exposition gives one
};

struct PromRejected {
  int line = 0;        // 1-based
  std::string reason;  // "line 7: expected '=' after label name 'le'"
};

struct PromText {
  std::vector<PromSample> samples;
  std::map<std::string, std::string> type;  // metric family -> counter|gauge|histogram|...
  std::map<std::string, std::string> help;  // metric family -> help text, unescaped
  std::vector<PromRejected> rejected;
};

PromText parse_prometheus_text(std::string_view text);

// The series' name with its labels, sorted by label name, values escaped as in the format:
// `vllm:num_requests_running{model_name="m"}`; the bare name when it has no labels. Two
// samples of one series give the same key whatever order their labels were written in.
std::string series_key(const PromSample& s);

}  // namespace llmbench
