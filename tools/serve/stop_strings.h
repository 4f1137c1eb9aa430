// A request's `stop` strings, matched in the detokenized text as it grows, across token
// boundaries (a stop string may span several tokens, as vLLM matches it). Text that could still
// be the start of a stop string is held back (at most the longest stop string less one byte,
// never splitting a UTF-8 character), so a streamed client never sees text that a later token
// turns into a stop. When a stop string matches, the output ends before it (or after it with
// include_stop_str_in_output) and everything after it is dropped.
// Matched twice, on the same text: by the engine thread (TokenStop, which ends the request in
// the scheduler at the token that completes a match, so it is stored and counted as stopped and
// no token is made after it) and by the server thread building the client's text
// (completion_output.h), which cuts the text there.
// Not here: detokenizing (tools/text/stream_decoder.h).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tools/text/stream_decoder.h"

namespace llmbench {

class StopStrings {
 public:
  StopStrings(std::vector<std::string> stops, bool include_stop_str);

  bool empty() const { return stops_.empty(); }
  // Appends `text` (the next detokenized piece); returns the text that may go out now. After a
  // match, returns the output up to the stop (or through it) and nothing ever again.
  std::string feed(std::string_view text);
  // At the end of a request not stopped here: the text still held back.
  std::string flush();
  bool stopped() const { return stopped_; }
  // The stop string that matched ("" none).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  bool include_;
  std::size_t hold_ = 0;  // longest stop string less one byte
  std::string pending_;   // text not sent yet
  bool stopped_ = false;
  std::string matched_;
};

// The engine thread's side: a request's tokens, detokenized as a stream is, against its stop
// strings.
class TokenStop {
 public:
  TokenStop(const Tokenizer& tok, std::vector<std::string> stops)
      : decoder_(tok), stops_(std::move(stops), false) {}
  // The next token; true once a stop string has matched.
  bool feed(std::int32_t token) {
    stops_.feed(decoder_.push(token));
    return stops_.stopped();
  }

 private:
  StreamDecoder decoder_;
  StopStrings stops_;
};

}  // namespace llmbench
