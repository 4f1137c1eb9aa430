// A request's output for the client (see completion_output.h).
#include "tools/serve/completion_output.h"

namespace llmbench {

using json = nlohmann::json;

CompletionOutput::CompletionOutput(const Tokenizer& tok, const CompletionRequest& r, bool chat)
    : tok_(tok), chat_(chat), include_stop_(r.include_stop_str),
      want_logprobs_(r.sampling.logprobs >= 0), decoder_(tok),
      stops_(r.stop, r.include_stop_str) {
  plain_text_ = stops_.empty() && (r.stop_token_ids.empty() || include_stop_);
  if (r.echo) echo_ = tok.decode(r.prompt);
  text_offset_ = echo_.size();
  if (want_logprobs_)
    logprobs_ = chat ? json{{"content", json::array()}}
                     : json{{"tokens", json::array()}, {"token_logprobs", json::array()},
                            {"top_logprobs", json::array()}, {"text_offset", json::array()}};
}

json CompletionOutput::entry(std::int32_t token, const SampledLogprobs& lp) {
  const std::string piece = tok_.decode(std::vector<std::int32_t>{token});
  if (chat_) {
    auto bytes = [](const std::string& s) {
      json b = json::array();
      for (unsigned char c : s) b.push_back(int(c));
      return b;
    };
    json top = json::array();
    for (const TokenLogprob& t : lp.top) {
      const std::string p = tok_.decode(std::vector<std::int32_t>{t.token});
      top.push_back({{"token", p}, {"logprob", t.logprob}, {"bytes", bytes(p)}});
    }
    return {{"content", json::array({{{"token", piece},
                                      {"logprob", lp.logprob},
                                      {"bytes", bytes(piece)},
                                      {"top_logprobs", top}}})}};
  }
  json top = json::object();
  for (const TokenLogprob& t : lp.top) top[tok_.decode(std::vector<std::int32_t>{t.token})] = t.logprob;
  top[piece] = lp.logprob;
  json one = {{"tokens", json::array({piece})},
              {"token_logprobs", json::array({lp.logprob})},
              {"top_logprobs", json::array({top})},
              {"text_offset", json::array({text_offset_})}};
  text_offset_ += piece.size();
  return one;
}

void CompletionOutput::append(json& all, const json& one) const {
  for (auto it = one.begin(); it != one.end(); ++it)
    for (const json& v : it.value()) all[it.key()].push_back(v);
}

CompletionOutput::Piece CompletionOutput::add(const StreamEvent& e) {
  Piece out;
  if (done() || !e.token) return out;
  const std::int32_t token = *e.token;
  tokens_.push_back(token);
  if (want_logprobs_ && e.logprobs) {
    out.logprobs = entry(token, *e.logprobs);
    append(logprobs_, out.logprobs);
  }
  // The token's text, unless it is a stop token whose text is left out.
  std::string piece;
  if (e.stop_token) stop_token_ = token;
  if (!e.stop_token || include_stop_) piece = decoder_.push(token);
  if (e.finish != FinishReason::kNone) piece += decoder_.finish();
  out.text = stops_.feed(piece);
  if (stops_.stopped()) {
    finish_ = FinishReason::kStop;
  } else if (e.finish != FinishReason::kNone) {
    out.text += stops_.flush();
    finish_ = e.finish;
  }
  text_ += out.text;
  return out;
}

json CompletionOutput::stop_reason() const {
  if (stops_.stopped()) return stops_.matched();
  if (stop_token_) return *stop_token_;
  return nullptr;
}

std::string CompletionOutput::text() const {
  return echo_ + (plain_text_ ? tok_.decode(tokens_) : text_);
}

json CompletionOutput::logprobs() const { return want_logprobs_ ? logprobs_ : json(nullptr); }

}  // namespace llmbench
