// Coverage-guided fuzzing of the server's request bodies (tools/serve/completion_request.h,
// chat_request.h, sampling_params.h): POST /v1/completions and /v1/chat/completions JSON as a
// client may send it. Every outcome is a request or ApiError with an HTTP status and a message
// (the 400 the server answers); never a crash or another exception.
// scripts/libfuzzer.sh builds and runs it.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tools/serve/chat_request.h"
#include "tools/serve/completion_request.h"
#include "tools/text/chat_template.h"
#include "tools/text/tokenizer.h"

namespace {

// What the parse promises (token ids are checked against the model's vocabulary later, by
// Scheduler::validate, so any int32 may come through here).
void check(const llmbench::CompletionRequest& r) {
  if (r.max_tokens < 1) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const llmbench::Tokenizer tok(256);
  static const llmbench::ChatTemplate tmpl = llmbench::preset_chat_template("tiny");
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t max_values = (data[0] & 1) ? 4096 : 0;
  try {
    if (data[0] & 2)
      check(llmbench::parse_chat_request(body, &tmpl, tok, max_values));
    else
      check(llmbench::parse_completion_request(body, tok, max_values));
  } catch (const llmbench::ApiError& e) {
    if (e.status < 400 || e.status > 599 || std::string(e.what()).empty()) std::abort();
  }
  return 0;
}
