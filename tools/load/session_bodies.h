// The request bodies of a dataset workload (dataset.h), turn by turn, for the load client's
// level loop (load_client.h). A session's turn k carries the whole history so far: every earlier
// turn's user message followed by its answer (the dataset's reference answer, or the server's
// own reply with --use-server-responses, or when the dataset has none), then turn k's message.
//   chat (--endpoint chat): a `messages` list: [user, assistant, user, assistant, ..., user];
//   completions:            a `prompt` text of the same parts joined by blank lines ("\n\n"),
//                           or, for a single-turn token-id prompt the server accepts, the ids.
// A token-id prompt sent as text (chat, a server that refuses ids, or a later turn) is the
// random workload's synthetic text of those ids. input_len is the tokens counted for the whole
// history (dataset counts, and the server's usage for its own replies), 0 when any part is
// uncounted (the server's usage then says). Single-turn bodies are built once, before the first
// level, so the loop only copies them.
// Not here: the chat template (the server's business), the timing of turns (the client).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tools/load/dataset.h"
#include "tools/load/load_client.h"

namespace llmbench {

struct BodyOptions {
  std::string model;
  bool chat = false;
  bool token_ids = true;          // the server takes token-id prompts (the probe said so)
  bool ignore_eos = false;
  bool use_server_responses = false;
  std::int64_t think_ms = 0;      // --think-time-ms: a turn's wait when the file gives none
  bool stream = true;             // false: --no-stream
};

class SessionBodies {
 public:
  SessionBodies(const Workload& w, BodyOptions o);
  // What the requests' prompts are (load_run.prompt_kind): chat, token_ids (every request's
  // prompt as ids), text (none), or mixed (ids for the rows that have them, text for the rest
  // and for later turns).
  std::string prompt_kind() const;

  // Fills the drive's session count, bodies and (multi-turn) turns, think times and reply hook.
  // The drive must not outlive this object.
  void attach(LevelDrive& d);
  // Trace replay: each session's due time in s, its timestamp times `time_scale`.
  std::vector<double> arrival_s(double time_scale) const;

  int sessions() const { return int(w_.sessions.size()); }
  // The body of (rec.session_index, rec.turn_index); sets rec.input_len and rec.max_tokens.
  std::string body(RequestRecord& rec) const;
  // Keeps a finished turn's reply for the history of the session's next turn.
  void turn_done(const RequestRecord& rec);

 private:
  struct Reply {
    std::string text;
    int tokens = -1;  // -1: not counted
  };
  std::string build(int session, int turn, int& input_len) const;
  // The answer turn j of session s gets in later turns' history.
  Reply history_reply(int session, int turn) const;

  const Workload& w_;
  BodyOptions o_;
  std::vector<std::vector<Reply>> server_replies_;  // [session][turn]
  std::vector<std::string> prebuilt_;               // single-turn: the body of each session
  std::vector<int> prebuilt_input_len_;
};

}  // namespace llmbench
