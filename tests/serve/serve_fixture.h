// An in-process `llmbench serve` for the server tests: a Server on an ephemeral loopback port,
// served from a thread, stopped by the fixture; an httplib client; SSE parsing; and the offline
// (static Session) tokens to compare with. Every wait is bounded in time.
#pragma once
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "tests/engine/generation.h"
#include "tools/serve/server.h"
#include "tools/text/chat_template.h"

namespace llmbench::test {

using json = nlohmann::json;

// The tiny preset, which every serve test serves unless it needs a slower model.
inline ModelConfig tiny() { return *find_preset("tiny"); }

// Server options that render chat requests with the ChatML template.
inline ServeOptions with_chatml() {
  ServeOptions opt;
  opt.chat_template = chat_template_by_name("chatml");
  return opt;
}

// A model slow enough per step (a few ms on 2 cores) that a stream of 2000 tokens takes
// seconds: for the disconnect and shutdown tests, which must act mid-stream.
inline ModelConfig slow_config() {
  ModelConfig c = *find_preset("tiny");
  c.name = "tiny-slow";
  c.dim = 512;
  c.n_layers = 4;
  c.n_heads = 8;
  c.n_kv_heads = 4;
  c.ffn_dim = 1024;
  c.vocab_size = 4096;
  c.max_seq_len = 4096;
  return c;
}

class ServeTest : public ::testing::Test {
 protected:
  void start(const ModelConfig& c, SchedulerOptions sched = {}, ServeOptions opt = {}) {
    model_ = std::make_unique<Model>(c, load_weights(c, RandomWeights(1), be_), be_);
    opt.port = 0;
    opt.model_name = c.name;
    server_ = std::make_unique<Server>(*model_, sched, opt);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->serve(); });
    // Bounded wait for /health.
    for (int i = 0; i < 200; ++i) {
      auto res = client().Get("/health");
      if (res && res->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "the server did not come up";
  }
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(500)) {
    if (!server_) return;
    server_->shutdown(grace);
    thread_.join();
    server_.reset();
  }
  void TearDown() override { stop(); }

  httplib::Client client() const {
    httplib::Client cli("127.0.0.1", port_);
    cli.set_connection_timeout(5);
    cli.set_read_timeout(30);
    cli.set_write_timeout(5);
    return cli;
  }

  std::vector<std::int32_t> offline(const std::vector<std::int32_t>& prompt, int max_tokens) {
    const int n = int(prompt.size());
    Session s(*model_, 1, n, n + max_tokens);
    const Generation g = generate(s, prompt, n, max_tokens - 1);
    std::vector<std::int32_t> tokens;
    for (const auto& t : g.tokens) tokens.push_back(t[0]);
    return tokens;
  }

  // The value of a metric line "name value" in /metrics, or -1.
  double metric(const std::string& name) {
    auto res = client().Get("/metrics");
    if (!res) return -1;
    std::istringstream in(res->body);
    for (std::string line; std::getline(in, line);)
      if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
    return -1;
  }

  CpuBackend be_{2};
  std::unique_ptr<Model> model_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// A streamed completion as the client saw it.
struct Streamed {
  int status = 0;
  std::vector<std::int32_t> tokens;
  std::vector<json> chunks;  // every data: line but [DONE]
  bool done = false;         // [DONE] seen
  std::string finish_reason;
  std::string raw;
};

// POSTs `body` with stream: true; `keep_going(chunks so far)` may stop reading (disconnect).
inline Streamed post_stream(httplib::Client cli, json body,
                            std::function<bool(const Streamed&)> keep_going = nullptr,
                            const std::string& path = "/v1/completions") {
  body["stream"] = true;
  Streamed out;
  std::string pending;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.set_header("Content-Type", "application/json");
  req.body = body.dump();
  req.content_receiver = [&](const char* data, std::size_t len, std::uint64_t, std::uint64_t) {
    out.raw.append(data, len);
    pending.append(data, len);
    for (std::size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      const std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (event.rfind("data: ", 0) != 0) continue;
      const std::string payload = event.substr(6);
      if (payload == "[DONE]") {
        out.done = true;
        continue;
      }
      json chunk = json::parse(payload);
      if (chunk.contains("choices"))
        for (const json& c : chunk["choices"]) {
          for (const json& id : c.value("token_ids", json::array()))
            out.tokens.push_back(id.get<std::int32_t>());
          if (!c["finish_reason"].is_null()) out.finish_reason = c["finish_reason"];
        }
      out.chunks.push_back(std::move(chunk));
    }
    return !keep_going || keep_going(out);
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  cli.send(req, res, err);
  out.status = res.status;
  return out;
}

}  // namespace llmbench::test
