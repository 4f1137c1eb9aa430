// The ShareGPT reader (see dataset.h): a JSON list of records, each with `conversations`, a
// list of {"from": "human"|"gpt"|..., "value": TEXT}. Single-turn: a record's first human turn
// is the prompt and the gpt turn right after it the reference answer, whose token count is the
// output length (vLLM's ShareGPT sampling); records are taken in a --seed shuffled order, the
// length filter applied when a tokenizer counts, until --num-requests are kept. --multi-turn:
// every human turn of a record, with the gpt turn after it as its answer, is one turn of one
// session; no length filter (a conversation's context grows by design).
// Not here: system turns (skipped, and said so in the notes).
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "kernels/common/error.h"
#include "engine/checkpoint/json_input.h"
#include "tools/load/dataset.h"
#include "tools/text/tokenizer.h"

namespace llmbench {

namespace {

using json = nlohmann::json;

bool is_human(const std::string& from) { return from == "human" || from == "user"; }
bool is_model(const std::string& from) {
  return from == "gpt" || from == "assistant" || from == "chatgpt" || from == "model";
}

struct Utterance {
  std::string from, value;
};

// A record's turns; BadInput naming the record when its shape is wrong.
std::vector<Utterance> utterances(const json& rec, std::size_t index, const std::string& path) {
  const auto where = [&] { return fmt::format("--dataset-path {}: record {}", path, index); };
  if (!rec.is_object() || !rec.contains("conversations") || !rec["conversations"].is_array())
    throw BadInput(where() + " has no \"conversations\" list");
  std::vector<Utterance> out;
  for (const json& u : rec["conversations"]) {
    if (!u.is_object() || !u.contains("from") || !u["from"].is_string() || !u.contains("value") ||
        !u["value"].is_string())
      throw BadInput(where() + ": a conversation turn without string \"from\" and \"value\"");
    out.push_back({u["from"].get<std::string>(), u["value"].get<std::string>()});
  }
  return out;
}

WorkloadTurn make_turn(const std::string& prompt, const std::string* reply, const DatasetOptions& o) {
  WorkloadTurn t;
  t.text = prompt;
  t.output_len = o.default_output_len;
  if (reply) t.reference_reply = *reply;
  if (o.tokenizer) {
    t.prompt_tokens = int(o.tokenizer->count(prompt));
    if (reply) t.output_len = std::max(1, int(o.tokenizer->count(*reply)));
  }
  return t;
}

// Every (human, following gpt) pair of a record, in order; a last human turn with no answer is
// a turn too. `skipped_system`: counts system turns left out.
WorkloadSession conversation(const std::vector<Utterance>& us, const DatasetOptions& o,
                             int& skipped_system) {
  WorkloadSession s;
  for (std::size_t i = 0; i < us.size(); ++i) {
    if (!is_human(us[i].from)) {
      if (!is_model(us[i].from)) ++skipped_system;
      continue;
    }
    const bool answered = i + 1 < us.size() && is_model(us[i + 1].from);
    s.turns.push_back(make_turn(us[i].value, answered ? &us[i + 1].value : nullptr, o));
    if (answered) ++i;
  }
  return s;
}

}  // namespace

Workload read_sharegpt(const DatasetOptions& o) {
  const std::string text = read_dataset_file(o.path);
  auto parsed = parse_json(text);
  if (!parsed.ok() && json_limit_violation(text, JsonLimits{}))
    throw BadInput("--dataset-path " + o.path + ": " + parsed.error);
  const json all = std::move(parsed.value);
  if (!parsed.ok() || !all.is_array())
    throw BadInput("--dataset-path " + o.path + ": expected a ShareGPT JSON list of records");
  Workload w;
  w.name = "sharegpt";
  w.counted = o.tokenizer != nullptr;
  const LengthFilter filter;
  std::map<std::string, int> rejected;
  int skipped_system = 0;
  const std::size_t want = o.num_requests > 0 ? std::size_t(o.num_requests) : all.size();
  for (std::size_t idx : seeded_order(all.size(), o.seed)) {
    if (w.sessions.size() >= want) break;
    const std::vector<Utterance> us = utterances(all[idx], idx, o.path);
    WorkloadSession s = conversation(us, o, skipped_system);
    if (s.turns.empty() || (!o.multi_turn && s.turns.front().reference_reply.empty())) {
      ++rejected["no human turn answered by gpt"];
      continue;
    }
    if (!o.multi_turn) {
      s.turns.resize(1);
      const WorkloadTurn& t = s.turns.front();
      if (o.tokenizer) {
        const std::string why = filter.reject(t.prompt_tokens, t.output_len);
        if (!why.empty()) {
          ++rejected[why];
          continue;
        }
      }
    }
    w.multi_turn = w.multi_turn || s.turns.size() > 1;
    w.sessions.push_back(std::move(s));
  }
  for (const auto& [why, n] : rejected)
    w.notes.push_back(fmt::format("sharegpt: {} record{} skipped ({})", n, n == 1 ? "" : "s", why));
  if (skipped_system > 0)
    w.notes.push_back(fmt::format("sharegpt: {} system turn{} left out", skipped_system,
                                  skipped_system == 1 ? "" : "s"));
  if (w.sessions.empty())
    throw BadInput("--dataset-path " + o.path + ": no usable conversation (a human turn answered "
                   "by a gpt turn" + std::string(o.tokenizer ? " within the length filter)" : ")"));
  if (w.sessions.size() < want && o.num_requests > 0)
    w.notes.push_back(fmt::format("sharegpt: only {} of the {} requested conversations are "
                                  "usable", w.sessions.size(), want));
  return w;
}

}  // namespace llmbench
