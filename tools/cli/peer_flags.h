// Flags of the tools llmbench's users come from, mapped to llmbench's own, so that
// `llmbench load --num-prompts 100` answers with the flag to use rather than only "unknown":
// vLLM's `vllm bench serve` (benchmark_serving.py) and `vllm bench latency`, vLLM's server,
// and NVIDIA's AIPerf / GenAI-Perf `profile`. Hints for the error line only: another tool's flag
// is never accepted silently, since the meanings differ in detail (vLLM draws random lengths
// uniformly, llmbench normally; AIPerf's --url has no scheme).
// Not the typo suggestions (suggest.h, which uses this) and not the flags themselves (cmd_*.cpp).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace llmbench {

struct PeerFlag {
  std::string_view subcommand;  // llmbench's: "load", "run", "serve"
  std::string_view flag;        // the other tool's, "--num-prompts"
  std::string_view tool;        // "vLLM", "AIPerf"
  std::string_view ours;        // completes "<tool>'s <flag> ...": "is --num-requests here"
};

// Every hint (tests check that each names flags llmbench has and none it has itself).
std::span<const PeerFlag> peer_flags();

// The hint for `flag` ("--num-prompts", no value) given to the subcommand `subcommand`
// ("load"), as "vLLM's --num-prompts is --num-requests here"; nullopt when no peer tool we
// know has that flag there.
std::optional<std::string> peer_flag_hint(std::string_view subcommand, std::string_view flag);

}  // namespace llmbench
