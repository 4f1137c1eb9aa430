// The jsonl reader (see dataset.h): one request a line, a JSON object with
//   prompt      a string, or a list of token ids; or
//   messages    a list of {"role", "content"} (chat form; the last one is the user's),
//   max_tokens  or output_len (optional; else counted from `response` with a tokenizer, else
//               --output-len),
//   response    (optional) the reference answer, sent back as history in a session,
//   session_id  (optional, string or integer) lines sharing one form a session, in file order,
//   delay_ms    (optional) think time before this turn of its session.
// Sessions (and lines without a session_id) keep the order of their first line; --num-requests
// keeps the first N of them. Blank lines are skipped; anything else that is not such an object is
// refused with its line number.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>

#include "kernels/common/error.h"
#include "engine/checkpoint/json_input.h"
#include "tools/load/dataset.h"
#include "tools/text/tokenizer.h"

namespace llmbench {

namespace {

using json = nlohmann::json;

class LineReader {
 public:
  LineReader(const std::string& path, int line) : where_(fmt::format("--dataset-path {}:{}", path, line)) {}
  [[noreturn]] void fail(const std::string& what) const { throw BadInput(where_ + ": " + what); }

  int positive_int(const json& j, const char* key) const {
    const json& v = j[key];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1 << 20))
      fail(std::string("\"") + key + "\" must be an integer in [1, 1048576]");
    return v.get<int>();
  }

  // prompt or messages into the turn.
  void prompt(const json& j, WorkloadTurn& t) const {
    if (j.contains("prompt") == j.contains("messages"))
      fail("expected exactly one of \"prompt\" and \"messages\"");
    if (j.contains("prompt")) {
      const json& p = j["prompt"];
      if (p.is_string()) {
        t.text = p.get<std::string>();
      } else if (p.is_array() && !p.empty()) {
        for (const json& id : p) {
          if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > INT32_MAX)
            fail("\"prompt\" as a list must hold token ids (integers >= 0)");
          t.prompt_ids.push_back(id.get<std::int32_t>());
        }
      } else {
        fail("\"prompt\" must be a string or a non-empty list of token ids");
      }
      return;
    }
    const json& m = j["messages"];
    if (!m.is_array() || m.empty()) fail("\"messages\" must be a non-empty list");
    for (const json& msg : m) {
      if (!msg.is_object() || !msg.contains("role") || !msg["role"].is_string() ||
          !msg.contains("content") || !msg["content"].is_string())
        fail("each message needs string \"role\" and \"content\"");
      const std::string role = msg["role"].get<std::string>();
      if (role != "user" && role != "assistant" && role != "system")
        fail("message role '" + role + "' (expected user, assistant or system)");
      t.messages.push_back({role, msg["content"].get<std::string>()});
    }
    if (t.messages.back().role != "user") fail("the last message must be the user's");
  }

 private:
  std::string where_;
};

std::string joined_text(const WorkloadTurn& t) {
  if (t.messages.empty()) return t.text;
  std::string s;
  for (const ChatMessage& m : t.messages) s += (s.empty() ? "" : "\n\n") + m.content;
  return s;
}

WorkloadTurn read_line(const json& j, const LineReader& r, const DatasetOptions& o) {
  WorkloadTurn t;
  r.prompt(j, t);
  if (j.contains("response")) {
    if (!j["response"].is_string()) r.fail("\"response\" must be a string");
    t.reference_reply = j["response"].get<std::string>();
  }
  if (j.contains("max_tokens") && j.contains("output_len"))
    r.fail("give \"max_tokens\" or \"output_len\", not both");
  if (j.contains("max_tokens")) t.output_len = r.positive_int(j, "max_tokens");
  else if (j.contains("output_len")) t.output_len = r.positive_int(j, "output_len");
  else if (o.tokenizer && !t.reference_reply.empty())
    t.output_len = std::max(1, int(o.tokenizer->count(t.reference_reply)));
  else t.output_len = o.default_output_len;
  if (j.contains("delay_ms")) {
    const json& d = j["delay_ms"];
    if (!d.is_number() || d.get<double>() < 0 || d.get<double>() > 3.6e6)
      r.fail("\"delay_ms\" must be a number of ms in [0, 3600000]");
    t.think_ms = std::int64_t(d.get<double>());
  }
  if (!t.prompt_ids.empty()) t.prompt_tokens = int(t.prompt_ids.size());
  else if (o.tokenizer) t.prompt_tokens = int(o.tokenizer->count(joined_text(t)));
  return t;
}

}  // namespace

Workload read_jsonl(const DatasetOptions& o) {
  std::istringstream in(read_dataset_file(o.path));
  Workload w;
  w.name = "jsonl";
  w.counted = o.tokenizer != nullptr;
  std::map<std::string, std::size_t> session_of;  // session_id -> index in w.sessions
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const LineReader r(o.path, n);
    auto parsed = parse_json(line);
    if (!parsed.ok()) r.fail("not valid JSON (" + parsed.error + ")");
    const json j = std::move(parsed.value);
    if (!j.is_object()) r.fail("not a JSON object");
    WorkloadTurn t = read_line(j, r, o);
    if (!j.contains("session_id")) {
      w.sessions.push_back({{std::move(t)}, -1});
      continue;
    }
    const json& sid = j["session_id"];
    if (!sid.is_string() && !sid.is_number_integer())
      r.fail("\"session_id\" must be a string or an integer");
    const std::string key = sid.is_string() ? "s:" + sid.get<std::string>() : "i:" + sid.dump();
    auto [it, fresh] = session_of.emplace(key, w.sessions.size());
    if (fresh) w.sessions.push_back({});
    w.sessions[it->second].turns.push_back(std::move(t));
  }
  if (w.sessions.empty()) throw BadInput("--dataset-path " + o.path + ": no requests (empty file)");
  if (o.num_requests > 0 && std::size_t(o.num_requests) < w.sessions.size())
    w.sessions.resize(std::size_t(o.num_requests));
  if (o.num_requests > 0 && std::size_t(o.num_requests) > w.sessions.size())
    w.notes.push_back(fmt::format("jsonl: the file has {} session{}, fewer than --num-requests {}",
                                  w.sessions.size(), w.sessions.size() == 1 ? "" : "s",
                                  o.num_requests));
  for (const WorkloadSession& s : w.sessions) w.multi_turn = w.multi_turn || s.turns.size() > 1;
  return w;
}

}  // namespace llmbench
