// POST /v1/chat/completions: `messages` (system / user / assistant; content a string or an
// array of text parts) rendered with the server's chat template (tools/text/chat_template.h)
// and tokenized with its special tokens as single ids (tools/text/chat_tokens.h); every other
// field as /v1/completions reads it (completion_request.h).
// Not here: answering (server.h).
#pragma once
#include <string>
#include <vector>

#include "tools/serve/completion_request.h"
#include "tools/text/chat_template.h"
#include "tools/text/tokenizer.h"

namespace llmbench {

// Throws ApiError (400) naming what is wrong: no messages, an unknown role, a content part
// that is not text, a conversation the template cannot express; 400 as well when the server
// has no chat template (`tmpl` null).
// `max_values` as parse_completion_request's.
CompletionRequest parse_chat_request(const std::string& body, const ChatTemplate* tmpl,
                                     const Tokenizer& tok, std::size_t max_values = 0);

}  // namespace llmbench
