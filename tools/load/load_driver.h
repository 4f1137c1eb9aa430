// `llmbench load` from options to stored and printed results: start the server (--server-cmd),
// resolve the model and the prompt form (a probe request), then per level warm up, run the
// measured requests through LoadClient, summarise, store (one transaction) and report progress
// on stderr; finally print the results and stop the server.
// Exit codes: 0 every measured request succeeded; 1 a request failed or the server died;
// 2 bad input or a server that cannot be reached / refuses the probe; 128 + signal when
// interrupted (finished levels stay stored).
#pragma once
#include <string>

#include "tools/load/load_plan.h"

namespace llmbench {

int run_load(const LoadOptions& options, const std::string& command_line);

// The JSON body of one streamed request (exposed for tests).
std::string request_body(const std::string& model, bool chat, bool token_ids,
                         const std::vector<std::int32_t>& prompt_ids, int max_tokens,
                         bool ignore_eos, bool stream);

}  // namespace llmbench
