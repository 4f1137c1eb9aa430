// Server-sent events of an OpenAI-compatible streaming response, and what a finished response
// says: each content chunk's arrival time and token count, usage, finish reason, [DONE], or why
// the response is not a valid stream. Splitting is incremental and cheap (it runs inside the
// client's event loop, stamping each event with the arrival time of the bytes that completed
// it); JSON parsing happens after the level, outside the timed loop. Pure: no I/O.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmbench {

// One `data:` event (its lines joined by '\n') and when its last byte arrived.
struct SseEvent {
  std::int64_t arrival_ns = 0;
  std::string data;
};

class SseSplitter {
 public:
  // Appends `n` bytes that arrived at `arrival_ns`; every event they complete goes to `out`.
  // Lines may end in "\n" or "\r\n"; comment lines (":...") and fields other than data are
  // skipped, as the SSE specification says.
  void feed(const char* p, std::size_t n, std::int64_t arrival_ns, std::vector<SseEvent>& out);
  // Lines (and one event's data) longer than this stop the splitter: overflowed() says so and
  // nothing more is kept, so a server that never sends a newline costs at most this much.
  void set_max_line_bytes(std::size_t n) { max_line_ = n; }
  bool overflowed() const { return overflowed_; }
  // Bytes of an event that has not ended (a stream that stopped mid-event).
  bool has_partial() const { return !line_.empty() || !data_.empty() || in_event_; }

 private:
  std::string line_, data_;
  bool in_event_ = false;
  bool overflowed_ = false;
  std::size_t max_line_ = std::size_t(1) << 20;
};

// One chunk that carried output: completions `choices[0].text` or `token_ids`, chat
// `choices[0].delta.content` (or `reasoning_content`).
struct ChunkRecord {
  std::int64_t arrival_ns = 0;
  int tokens = 0;  // len(token_ids) when the server sends them, else 1
};

struct ParsedStream {
  std::vector<ChunkRecord> chunks;
  std::optional<int> prompt_tokens, completion_tokens;  // usage, when reported
  std::string finish_reason;                            // "" when none was sent
  bool done = false;                                    // [DONE] seen
  std::string error;                                    // "" when the stream is valid
  std::string text;  // the output text joined (only when parse_stream was asked to collect it)
};

// Parses every event; `chat` selects the chat-completions chunk shape. The first problem
// (malformed JSON, an error object, a stream with no output) is the error. `collect_text`:
// also join the output text (choices[0].text, or delta.content for chat) into `text`, for
// multi-turn sessions that send the server's answers back as history.
ParsedStream parse_stream(const std::vector<SseEvent>& events, bool chat,
                          bool collect_text = false);

// A non-streamed answer (`load --no-stream`): one JSON object, `choices[0].text` or, for chat,
// `choices[0].message.content`, read by the same rules as a stream's one event. No chunks are
// returned (there is no first token to time); the tokens are usage.completion_tokens, else the
// length of choices[0].token_ids; neither is an error (`tokens` is then unknown).
ParsedStream parse_completion(const std::string& body, bool chat, bool collect_text = false);

}  // namespace llmbench
