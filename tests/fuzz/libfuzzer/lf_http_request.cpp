// Coverage-guided fuzzing of the server's HTTP/1.x request reader (tools/serve/http_request.h)
// with bytes arriving in arbitrary pieces and pipelined requests: every outcome is a request, a
// wait for more bytes or an error status the server can answer; never a crash, an unbounded
// buffer or a body past its limit. scripts/libfuzzer.sh builds and runs it.
#include <cstdint>
#include <cstdlib>

#include "tests/fuzz/libfuzzer/lf_split.h"
#include "tools/serve/http_request.h"

using llmbench::RequestReader;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto split = llmbench_fuzz::split_input(data, size);
  const std::size_t max_body = 64 + split.seed * 16;
  RequestReader reader(max_body);
  std::size_t fed = 0;
  for (std::string_view piece : split.pieces) {
    fed += piece.size();
    RequestReader::State st = reader.feed(piece.data(), piece.size());
    for (int guard = 0; guard < 64; ++guard) {  // every request the buffer completes
      if (st == RequestReader::State::kHeadDone) {
        st = reader.feed();
        continue;
      }
      if (st == RequestReader::State::kComplete) {
        const llmbench::HttpRequest req = reader.take();
        if (req.body.size() > max_body) std::abort();
        if (req.method.empty() || req.target.empty()) std::abort();
        st = reader.feed();
        continue;
      }
      break;
    }
    if (st == RequestReader::State::kError) {
      switch (reader.error_status()) {
        case 400: case 413: case 414: case 415: case 431: case 501: case 505: break;
        default: std::abort();  // a status the server does not expect to send
      }
      if (reader.error_message().empty()) std::abort();
      return 0;  // the server answers and closes the connection
    }
    if (reader.buffered() > fed) std::abort();
  }
  return 0;
}
