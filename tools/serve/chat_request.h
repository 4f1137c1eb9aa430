// POST /v1/chat/completions: `messages` (system / user / assistant; content a string or an
// array of text parts) rendered with the server's chat template (chat_template.h) and
// tokenized; every other field as /v1/completions reads it (completion_request.h).
// The rendered text is tokenized piece by piece: the family's special tokens ("<s>",
// "<|im_start|>", ...) become their single ids where the tokenizer has them, the text between
// is encoded as text.
// Not here: answering (server.h).
#pragma once
#include <string>
#include <vector>

#include "tools/serve/chat_template.h"
#include "tools/serve/completion_request.h"
#include "tools/serve/tokenizer.h"

namespace llmbench {

// Throws ApiError (400) naming what is wrong: no messages, an unknown role, a content part
// that is not text, a conversation the template cannot express; 400 as well when the server
// has no chat template (`tmpl` null).
// `max_values` as parse_completion_request's.
CompletionRequest parse_chat_request(const std::string& body, const ChatTemplate* tmpl,
                                     const Tokenizer& tok, std::size_t max_values = 0);

// The rendered prompt's token ids.
std::vector<std::int32_t> tokenize_chat(const std::string& rendered, ChatFamily family,
                                        const Tokenizer& tok);

}  // namespace llmbench
