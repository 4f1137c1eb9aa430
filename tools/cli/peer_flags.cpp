// Other tools' flags and llmbench's (see peer_flags.h).
#include "tools/cli/peer_flags.h"

#include <array>

namespace llmbench {

namespace {

constexpr std::array kPeerFlags = {
    // vLLM's serving benchmark (vllm bench serve, benchmarks/benchmark_serving.py).
    PeerFlag{"load", "--num-prompts", "vLLM", "is --num-requests here"},
    PeerFlag{"load", "--random-input-len", "vLLM", "is --input-len here"},
    PeerFlag{"load", "--random-output-len", "vLLM", "is --output-len here"},
    PeerFlag{"load", "--random-range-ratio", "vLLM",
             "draws lengths uniformly; here they are normal around --input-len and --output-len "
             "with --input-len-stddev and --output-len-stddev"},
    PeerFlag{"load", "--base-url", "vLLM", "is --url http://HOST:PORT here"},
    PeerFlag{"load", "--host", "vLLM", "is the HOST of --url http://HOST:PORT here"},
    PeerFlag{"load", "--port", "vLLM", "is the PORT of --url http://HOST:PORT here"},
    PeerFlag{"load", "--backend", "vLLM",
             "names the server's kind; llmbench load speaks the OpenAI API to any server: "
             "--endpoint completions|chat"},
    PeerFlag{"load", "--served-model-name", "vLLM", "is --model here (the name sent)"},
    PeerFlag{"load", "--num-warmups", "vLLM", "is --warmup-requests here"},
    PeerFlag{"load", "--save-result", "vLLM",
             "writes a JSON file; here every run is stored in --db, and --format vllm-json "
             "prints vLLM's keys"},
    PeerFlag{"load", "--result-dir", "vLLM",
             "names its JSON file's folder; here runs are stored in --db (--format vllm-json "
             "prints vLLM's keys)"},
    PeerFlag{"load", "--result-filename", "vLLM",
             "names its JSON file; here runs are stored in --db (--format vllm-json prints "
             "vLLM's keys)"},
    PeerFlag{"load", "--disable-tqdm", "vLLM", "is --quiet here"},
    // NVIDIA AIPerf / GenAI-Perf `profile`.
    PeerFlag{"load", "--request-count", "AIPerf", "is --num-requests here"},
    PeerFlag{"load", "--warmup-request-count", "AIPerf", "is --warmup-requests here"},
    PeerFlag{"load", "--synthetic-input-tokens-mean", "AIPerf", "is --input-len here"},
    PeerFlag{"load", "--synthetic-input-tokens-stddev", "AIPerf", "is --input-len-stddev here"},
    PeerFlag{"load", "--output-tokens-mean", "AIPerf", "is --output-len here"},
    PeerFlag{"load", "--output-tokens-stddev", "AIPerf", "is --output-len-stddev here"},
    PeerFlag{"load", "--endpoint-type", "AIPerf", "is --endpoint completions|chat here"},
    PeerFlag{"load", "--streaming", "AIPerf",
             "is the default here (--no-stream asks for whole answers)"},
    PeerFlag{"load", "--random-seed", "AIPerf", "is --seed here"},
    // vLLM's latency benchmark (vllm bench latency).
    PeerFlag{"run", "--batch-size", "vLLM", "is --batch here"},
    PeerFlag{"run", "--input-len", "vLLM", "is --prompt-len here"},
    PeerFlag{"run", "--output-len", "vLLM", "is --max-new-tokens here"},
    PeerFlag{"run", "--num-iters", "vLLM", "is --repeat here"},
    PeerFlag{"run", "--num-iters-warmup", "vLLM", "is --warmup here"},
    // vLLM's server (vllm serve).
    PeerFlag{"serve", "--block-size", "vLLM", "is --kv-block-size here"},
    PeerFlag{"serve", "--gpu-memory-utilization", "vLLM",
             "sizes the KV pool by memory; here it is sized in positions: --kv-cache-tokens"},
    PeerFlag{"serve", "--num-gpu-blocks-override", "vLLM",
             "counts KV blocks; here the pool is sized in positions: --kv-cache-tokens"},
    PeerFlag{"serve", "--enable-chunked-prefill", "vLLM",
             "is the default here (--no-chunked-prefill turns it off)"},
    PeerFlag{"serve", "--tensor-parallel-size", "vLLM",
             "splits the model over devices; llmbench serve runs on one"},
};

}  // namespace

std::span<const PeerFlag> peer_flags() { return kPeerFlags; }

std::optional<std::string> peer_flag_hint(std::string_view subcommand, std::string_view flag) {
  for (const PeerFlag& p : kPeerFlags)
    if (p.subcommand == subcommand && p.flag == flag)
      return std::string(p.tool) + "'s " + std::string(p.flag) + " " + std::string(p.ours);
  return std::nullopt;
}

}  // namespace llmbench
