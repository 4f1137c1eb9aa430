// Coverage-guided fuzzing of what the load client reads from a server (tools/load/stream_parse.h):
// server-sent events split at arbitrary points, each event's JSON chunk, and a non-streamed
// answer. Every outcome is a parsed stream or one with `error` set; never a crash or another
// exception. scripts/libfuzzer.sh builds and runs it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/fuzz/libfuzzer/lf_split.h"
#include "tools/load/stream_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto split = llmbench_fuzz::split_input(data, size);
  const bool chat = split.seed & 1;
  llmbench::SseSplitter splitter;
  splitter.set_max_line_bytes(256 + (split.seed >> 1) * 64);
  std::vector<llmbench::SseEvent> events;
  std::int64_t t = 0;
  std::string whole;
  for (std::string_view piece : split.pieces) {
    splitter.feed(piece.data(), piece.size(), t += 1000, events);
    whole += piece;
  }
  const llmbench::ParsedStream s = llmbench::parse_stream(events, chat, split.seed & 2);
  for (const auto& c : s.chunks)
    if (c.tokens < 0) std::abort();
  const llmbench::ParsedStream one = llmbench::parse_completion(whole, chat, split.seed & 2);
  if (!one.chunks.empty()) std::abort();  // a whole answer has no first token to time
  return 0;
}
