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
  for (const char* field : {"temperature", "top_p", "n", "best_of", "presence_penalty",
                            "frequency_penalty"}) {
    try {
      parse_completion_request(std::string(R"({"prompt": "x", ")") + field + R"(": 2})", t);
      ADD_FAILURE() << field << " accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.param, field);
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos);
    }
  }
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "echo": true})", t), ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "top_k": 40})", t), ApiError);
  EXPECT_NO_THROW(parse_completion_request(R"({"prompt": "x", "top_k": -1})", t));
  EXPECT_THROW(parse_completion_request(R"({"prompt": "x", "stream_options": {}})", t), ApiError);
}

TEST(CompletionRequest, ErrorObjectIsOpenAiShaped) {
  const std::string j = error_json(ApiError(400, "bad \"x\"", "invalid_request_error", "x"));
  EXPECT_EQ(j, R"({"error":{"code":null,"message":"bad \"x\"","param":"x",)"
               R"("type":"invalid_request_error"}})");
}

}  // namespace
}  // namespace llmbench
