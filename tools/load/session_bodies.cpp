// Request bodies of dataset workloads (see session_bodies.h).
#include "tools/load/session_bodies.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "tools/load/load_plan.h"

namespace llmbench {

namespace {

using ojson = nlohmann::ordered_json;

// A turn's own prompt as text.
std::string turn_text(const WorkloadTurn& t) {
  if (!t.messages.empty()) {
    std::string s;
    for (const ChatMessage& m : t.messages) s += (s.empty() ? "" : "\n\n") + m.content;
    return s;
  }
  return t.prompt_ids.empty() ? t.text : synthetic_text(t.prompt_ids);
}

void add_turn_messages(ojson& messages, const WorkloadTurn& t) {
  if (t.messages.empty()) {
    messages.push_back({{"role", "user"}, {"content", turn_text(t)}});
    return;
  }
  for (const ChatMessage& m : t.messages)
    messages.push_back({{"role", m.role}, {"content", m.content}});
}

}  // namespace

SessionBodies::SessionBodies(const Workload& w, BodyOptions o) : w_(w), o_(std::move(o)) {
  server_replies_.resize(w_.sessions.size());
  for (std::size_t s = 0; s < w_.sessions.size(); ++s)
    server_replies_[s].resize(w_.sessions[s].turns.size());
  if (w_.multi_turn) return;
  prebuilt_.reserve(w_.sessions.size());
  prebuilt_input_len_.reserve(w_.sessions.size());
  for (std::size_t s = 0; s < w_.sessions.size(); ++s) {
    int input_len = 0;
    prebuilt_.push_back(build(int(s), 0, input_len));
    prebuilt_input_len_.push_back(input_len);
  }
}

std::string SessionBodies::prompt_kind() const {
  if (o_.chat) return "chat";
  std::size_t ids = 0, requests = 0;
  for (const WorkloadSession& s : w_.sessions) {
    requests += s.turns.size();
    if (!s.turns.empty() && !s.turns[0].prompt_ids.empty() && o_.token_ids) ++ids;
  }
  return ids == 0 ? "text" : ids == requests ? "token_ids" : "mixed";
}

SessionBodies::Reply SessionBodies::history_reply(int session, int turn) const {
  const WorkloadTurn& t = w_.sessions[std::size_t(session)].turns[std::size_t(turn)];
  const Reply& server = server_replies_[std::size_t(session)][std::size_t(turn)];
  if (o_.use_server_responses || t.reference_reply.empty()) return server;
  return {t.reference_reply, w_.counted ? t.output_len : -1};
}

std::string SessionBodies::build(int session, int turn, int& input_len) const {
  const WorkloadSession& s = w_.sessions[std::size_t(session)];
  const WorkloadTurn& now = s.turns[std::size_t(turn)];
  bool known = now.prompt_tokens >= 0;
  long long tokens = std::max(0, now.prompt_tokens);
  ojson j;
  if (!o_.model.empty()) j["model"] = o_.model;
  if (o_.chat) {
    ojson messages = ojson::array();
    for (int k = 0; k < turn; ++k) {
      add_turn_messages(messages, s.turns[std::size_t(k)]);
      messages.push_back({{"role", "assistant"}, {"content", history_reply(session, k).text}});
    }
    add_turn_messages(messages, now);
    j["messages"] = std::move(messages);
  } else if (turn == 0 && !now.prompt_ids.empty() && o_.token_ids) {
    j["prompt"] = now.prompt_ids;
  } else {
    std::string prompt;
    for (int k = 0; k < turn; ++k)
      prompt += turn_text(s.turns[std::size_t(k)]) + "\n\n" + history_reply(session, k).text + "\n\n";
    j["prompt"] = prompt + turn_text(now);
  }
  for (int k = 0; k < turn; ++k) {
    const WorkloadTurn& t = s.turns[std::size_t(k)];
    const Reply r = history_reply(session, k);
    known = known && t.prompt_tokens >= 0 && r.tokens >= 0;
    tokens += std::max(0, t.prompt_tokens) + std::max(0, r.tokens);
  }
  input_len = known ? int(tokens) : 0;
  j["max_tokens"] = now.output_len;
  j["stream"] = o_.stream;
  if (o_.stream) j["stream_options"] = {{"include_usage", true}};
  if (o_.ignore_eos) j["ignore_eos"] = true;
  return j.dump();
}

std::string SessionBodies::body(RequestRecord& rec) const {
  const WorkloadTurn& t =
      w_.sessions[std::size_t(rec.session_index)].turns[std::size_t(rec.turn_index)];
  rec.max_tokens = t.output_len;
  if (!prebuilt_.empty()) {
    rec.input_len = prebuilt_input_len_[std::size_t(rec.session_index)];
    return prebuilt_[std::size_t(rec.session_index)];
  }
  return build(rec.session_index, rec.turn_index, rec.input_len);
}

void SessionBodies::turn_done(const RequestRecord& rec) {
  Reply& r = server_replies_[std::size_t(rec.session_index)][std::size_t(rec.turn_index)];
  r.text = rec.reply_text;
  r.tokens = rec.completion_tokens ? *rec.completion_tokens : -1;
}

void SessionBodies::attach(LevelDrive& d) {
  d.max_requests = sessions();
  d.make_body = [this](int, RequestRecord& rec) { return body(rec); };
  if (!w_.multi_turn) return;
  d.turns = [this](int s) { return int(w_.sessions[std::size_t(s)].turns.size()); };
  d.think_ns = [this](int s, int t) {
    const std::int64_t ms = w_.sessions[std::size_t(s)].turns[std::size_t(t)].think_ms;
    return (ms >= 0 ? ms : o_.think_ms) * 1'000'000;
  };
  d.on_turn_done = [this](const RequestRecord& rec) { turn_done(rec); };
}

std::vector<double> SessionBodies::arrival_s(double time_scale) const {
  std::vector<double> t;
  t.reserve(w_.sessions.size());
  for (const WorkloadSession& s : w_.sessions) t.push_back(std::max(0.0, s.timestamp_ms) / 1000 * time_scale);
  return t;
}

}  // namespace llmbench
