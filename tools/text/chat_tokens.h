// A rendered chat (chat_template.h) as token ids: the family's special tokens ("<s>",
// "<|im_start|>", "<|begin_of_text|>", ...) become their single ids where the tokenizer has
// them (a SentencePiece control piece, a tokenizer.json added token), and the text between
// them is encoded as text; with the byte mapping, which has no special tokens, all of it is text.
// Not here: rendering (chat_template.h), request parsing (tools/serve/chat_request.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tools/text/chat_template.h"
#include "tools/text/tokenizer.h"

namespace llmbench {

std::vector<std::int32_t> tokenize_chat(const std::string& rendered, ChatFamily family,
                                        const Tokenizer& tok);

}  // namespace llmbench
