// The query header (-- purpose / -- params / -- columns) and SQL literal parsing: what is
// accepted, and that every malformed header is BadInput naming the file and line.
#include <gtest/gtest.h>

#include "kernels/common/error.h"
#include "tools/query/bundled_queries.h"
#include "tools/store/sql_value.h"

namespace llmbench {
namespace {

TEST(QueryHeader, ParsesParamsWithDefaultsAndColumnsWithMeanings) {
  const auto h = parse_query_header(
      "-- purpose: ops in a window\n"
      "-- params: case_id = NULL (bench_case.id; NULL: the latest); name = 'it''s (x)' (a name, "
      "quoted); top_n = 20 (rows)\n"
      "-- columns: name (op), total_ms (ms, per repetition), n\n"
      "SELECT 1;\n",
      "t.sql");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->purpose, "ops in a window");
  ASSERT_EQ(h->params.size(), 3u);
  EXPECT_EQ(h->params[0].name, "case_id");
  EXPECT_EQ(h->params[0].default_sql, "NULL");
  EXPECT_EQ(h->params[0].description, "bench_case.id; NULL: the latest");
  EXPECT_EQ(h->params[1].default_sql, "'it''s (x)'");
  EXPECT_EQ(h->params[1].description, "a name, quoted");
  EXPECT_EQ(h->params[2].default_sql, "20");
  ASSERT_EQ(h->columns.size(), 3u);
  EXPECT_EQ(h->columns[1].name, "total_ms");
  EXPECT_EQ(h->columns[1].meaning, "ms, per repetition");
  EXPECT_EQ(h->columns[2].name, "n");
  EXPECT_EQ(h->columns[2].meaning, "");
  EXPECT_TRUE(h->find_param("top_n"));
  EXPECT_FALSE(h->find_param("nope"));
}

TEST(QueryHeader, NoneAndWindowsLineEnds) {
  const auto h = parse_query_header("-- purpose: p\r\n-- params: none\r\n-- columns: a (x)\r\n",
                                    "t.sql");
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->params.empty());
  EXPECT_EQ(h->columns[0].meaning, "x");
}

TEST(QueryHeader, FilesWithoutAHeaderHaveNone) {
  EXPECT_FALSE(parse_query_header("SELECT 1;", "t.sql"));
  EXPECT_FALSE(parse_query_header("-- just a comment\n-- purpose: late\nSELECT 1;", "t.sql"));
  EXPECT_FALSE(parse_query_header("", "t.sql"));
}

TEST(QueryHeader, MalformedHeadersNameTheFileAndLine) {
  struct Case {
    const char* text;
    const char* mention;
  };
  for (const Case& c : {
           Case{"-- purpose:\n-- params: none\n-- columns: a\n", "line 1"},
           Case{"-- purpose: p\n-- columns: a\n", "line 2"},
           Case{"-- purpose: p\n-- params: none\nSELECT 1;\n", "line 3"},
           Case{"-- purpose: p\n-- params: x (no default)\n-- columns: a\n", "name = default"},
           Case{"-- purpose: p\n-- params: 1x = 1 (d)\n-- columns: a\n", "identifier"},
           Case{"-- purpose: p\n-- params: x = decode (d)\n-- columns: a\n", "SQL literal"},
           Case{"-- purpose: p\n-- params: x = 1 (a); x = 2 (b)\n-- columns: a\n", "twice"},
           Case{"-- purpose: p\n-- params: none\n-- columns: a b (c)\n", "column (meaning)"},
       }) {
    try {
      parse_query_header(c.text, "mine.sql");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const BadInput& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("mine.sql"), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.mention), std::string::npos) << msg;
    }
  }
}

TEST(SqlLiteral, NullNumbersAndQuotedStrings) {
  EXPECT_TRUE(parse_sql_literal("NULL")->is_null());
  EXPECT_TRUE(parse_sql_literal(" null ")->is_null());
  EXPECT_EQ(std::get<std::int64_t>(parse_sql_literal("42")->v), 42);
  EXPECT_EQ(std::get<std::int64_t>(parse_sql_literal("-7")->v), -7);
  EXPECT_EQ(std::get<double>(parse_sql_literal("0.5")->v), 0.5);
  EXPECT_EQ(std::get<double>(parse_sql_literal("1e3")->v), 1000.0);
  EXPECT_EQ(std::get<std::string>(parse_sql_literal("'decode'")->v), "decode");
  EXPECT_EQ(std::get<std::string>(parse_sql_literal("'it''s'")->v), "it's");
  EXPECT_EQ(std::get<std::string>(parse_sql_literal("''")->v), "");
  for (const char* bad : {"decode", "'open", "'a'b'", "inf", "nan", "1,2", "", "(1)"})
    EXPECT_FALSE(parse_sql_literal(bad)) << bad;
}

TEST(SqlLiteral, ParamValuesFallBackToText) {
  EXPECT_EQ(std::get<std::int64_t>(parse_param_value("3").v), 3);
  EXPECT_EQ(std::get<std::string>(parse_param_value("decode_step").v), "decode_step");
  EXPECT_EQ(std::get<std::string>(parse_param_value("'3'").v), "3");  // quoted: text
  EXPECT_TRUE(parse_param_value("NULL").is_null());
  EXPECT_EQ(SqlValue{std::string("it's")}.to_sql(), "'it''s'");
}

}  // namespace
}  // namespace llmbench
