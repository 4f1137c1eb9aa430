// Request parsing and the byte tokenizer, without a server.
#include <gtest/gtest.h>

#include "tools/serve/completion_request.h"
#include "tools/text/tokenizer.h"

namespace llmbench {
namespace {

TEST(Tokenizer, EncodesBytesAndDecodesPrintably) {
  Tokenizer t(256);
  EXPECT_EQ(t.encode("Hi\n"), (std::vector<std::int32_t>{72, 105, 10}));
  EXPECT_EQ(t.encode("\xc3\xa9"), (std::vector<std::int32_t>{195, 169}));
  EXPECT_EQ(t.decode({72, 105, 10, 0, 4711}), "Hi\n<0><4711>");
  EXPECT_EQ(Tokenizer(100).encode("d"), (std::vector<std::int32_t>{0}));  // 100 % 100
}

TEST(CompletionRequest, ParsesTheSupportedFields) {
  Tokenizer t(256);
  const auto r = parse_completion_request(
      R"({"model": "m", "prompt": [5, 6], "max_tokens": 3, "stream": true,
          "stream_options": {"include_usage": true}, "ignore_eos": true, "temperature": 0.0})",
      t);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.prompt, (std::vector<std::int32_t>{5, 6}));
  EXPECT_EQ(r.max_tokens, 3);
  EXPECT_TRUE(r.stream && r.include_usage && r.ignore_eos);
  EXPECT_EQ(parse_completion_request(R"({"prompt": ["ab"]})", t).prompt,
            (std::vector<std::int32_t>{97, 98}));
  EXPECT_EQ(parse_completion_request(R"({"prompt": [[1, 2]]})", t).prompt,
            (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(parse_completion_request(R"({"prompt": "x"})", t).max_tokens, 16);
}

TEST(CompletionRequest, RefusesWhatItDoesNotImplementByName) {
  Tokenizer t(256);
  // 2 is out of range for top_p and min_p, and unsupported for the others.
  for (const char* field : {"top_p", "min_p", "n", "best_of", "presence_penalty",
                            "frequency_penalty", "logit_bias", "min_tokens"}) {
    try {
      parse_completion_request(std::string(R"({"prompt": "x", ")") + field + R"(": 2})", t);
      ADD_FAILURE() << field << " accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.param, field);
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos);
    }
  }
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "echo": true, "logprobs": 1})", t),
               ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "temperature": -0.5})", t), ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "top_k": -2})", t), ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "logprobs": 21})", t), ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "logprobs": true})", t), ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "stop": [1]})", t), ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "stop_token_ids": [-1]})", t),
               ApiError);
  EXPECT_NO_THROW(parse_completion_request(R"({"prompt": "x", "top_k": -1})", t));
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "stream_options": {}})", t), ApiError);
}

TEST(CompletionRequest, ReadsTheSamplingFields) {
  Tokenizer t(256);
  const CompletionRequest r = parse_completion_request(
      R"({"prompt": "x", "temperature": 0.7, "top_p": 0.9, "top_k": 40, "min_p": 0.05,
          "seed": 11, "stop": "ab", "stop_token_ids": [3, 4], "logprobs": 2,
          "include_stop_str_in_output": true})",
      t);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.7f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.05f);
  EXPECT_EQ(r.sampling.seed, std::optional<std::uint64_t>(11));
  EXPECT_EQ(r.sampling.logprobs, 2);
  EXPECT_EQ(r.stop, std::vector<std::string>{"ab"});
  EXPECT_EQ(r.stop_token_ids, (std::vector<std::int32_t>{3, 4}));
  EXPECT_TRUE(r.include_stop_str);
  EXPECT_FALSE(r.max_tokens_given);
  const CompletionRequest g = parse_completion_request(R"({"prompt": "x", "echo": true,
                                                           "max_tokens": 3})", t);
  EXPECT_TRUE(g.sampling.greedy());
  EXPECT_EQ(g.sampling.logprobs, -1);
  EXPECT_TRUE(g.echo);
  EXPECT_TRUE(g.max_tokens_given);
}

TEST(CompletionRequest, ErrorObjectIsOpenAiShaped) {
  const std::string j = error_json(ApiError(400, "bad \"x\"", "invalid_request_error", "x"));
  EXPECT_EQ(j, R"({"error":{"code":null,"message":"bad \"x\"","param":"x",)"
               R"("type":"invalid_request_error"}})");
}

}  // namespace
}  // namespace llmbench
