// median / percentile / stdev as SQL aggregates: exact values over SQL, NULL handling, groups,
// and the errors (p out of range or varying, non-numeric input). Expected percentiles are
// numpy.percentile(..., method="linear") values, chosen to be exact in binary floating point.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"
#include "tools/query/sql_functions.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {
namespace {

class SqlFunctions : public testing::Test {
 protected:
  SqlFunctions() : db_(":memory:", Db::Mode::kCreate) { register_sql_functions(db_.handle()); }

  // The single value `sql` returns; nullopt for NULL.
  std::optional<double> value(const std::string& sql) {
    Stmt s = db_.prepare(sql);
    EXPECT_TRUE(s.step()) << sql;
    if (s.column_type(0) == SQLITE_NULL) return std::nullopt;
    return s.column_double(0);
  }

  Db db_;
};

constexpr const char* kOneToFour = "(VALUES (3), (1), (4), (2))";  // unsorted on purpose

TEST_F(SqlFunctions, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(value("SELECT median(column1) FROM (VALUES (5), (1), (3))"), 3.0);
  EXPECT_EQ(value(std::string("SELECT median(column1) FROM ") + kOneToFour), 2.5);
  EXPECT_EQ(value("SELECT median(column1) FROM (VALUES (7))"), 7.0);
  EXPECT_EQ(value("SELECT median(column1) FROM (VALUES (1), (2.5), (100))"), 2.5);  // int + real
}

TEST_F(SqlFunctions, PercentileInterpolatesLinearlyLikeNumpy) {
  const std::string from = std::string(" FROM ") + kOneToFour;
  EXPECT_EQ(value("SELECT percentile(column1, 0)" + from), 1.0);
  EXPECT_EQ(value("SELECT percentile(column1, 25)" + from), 1.75);   // rank 0.75
  EXPECT_EQ(value("SELECT percentile(column1, 50)" + from), 2.5);
  EXPECT_EQ(value("SELECT percentile(column1, 75)" + from), 3.25);   // rank 2.25
  EXPECT_EQ(value("SELECT percentile(column1, 100)" + from), 4.0);
  EXPECT_EQ(value("SELECT percentile(column1, 90) FROM (VALUES (0), (10))"), 9.0);
  EXPECT_EQ(value("SELECT percentile(column1, 62.5) FROM (VALUES (0), (8), (16))"), 10.0);
  EXPECT_EQ(value("SELECT percentile(column1, 99) FROM (VALUES (42))"), 42.0);
  // Eleven values 0..100 step 10: the p-th percentile is p itself.
  EXPECT_EQ(value("WITH RECURSIVE v(x) AS (SELECT 0 UNION ALL SELECT x + 10 FROM v WHERE x < 100)"
                  " SELECT percentile(x, 30) FROM v"),
            30.0);
}

TEST_F(SqlFunctions, StdevIsTheSampleStandardDeviation) {
  // {2,4,4,4,5,5,7,9}: mean 5, squared deviations sum to 32, n - 1 = 7.
  EXPECT_EQ(value("SELECT stdev(column1) FROM (VALUES (2), (4), (4), (4), (5), (5), (7), (9))"),
            std::sqrt(32.0 / 7.0));
  EXPECT_EQ(value("SELECT stdev(column1) FROM (VALUES (1), (3))"), std::sqrt(2.0));
  EXPECT_EQ(value("SELECT stdev(column1) FROM (VALUES (5), (5), (5))"), 0.0);
  // Nanosecond timestamps: a one-pass sum of squares would lose these digits.
  EXPECT_EQ(value("SELECT stdev(column1) FROM (VALUES (1000000000001), (1000000000003))"),
            std::sqrt(2.0));
}

TEST_F(SqlFunctions, NullsAreSkippedAndEmptyGroupsGiveNull) {
  EXPECT_EQ(value("SELECT median(column1) FROM (VALUES (1), (NULL), (3))"), 2.0);
  EXPECT_EQ(value("SELECT percentile(column1, 100) FROM (VALUES (NULL), (8))"), 8.0);
  EXPECT_EQ(value("SELECT stdev(column1) FROM (VALUES (1), (NULL), (3))"), std::sqrt(2.0));
  EXPECT_EQ(value("SELECT median(column1) FROM (VALUES (1)) WHERE 0"), std::nullopt);
  EXPECT_EQ(value("SELECT percentile(column1, 50) FROM (VALUES (1)) WHERE 0"), std::nullopt);
  EXPECT_EQ(value("SELECT median(column1) FROM (VALUES (NULL), (NULL))"), std::nullopt);
  EXPECT_EQ(value("SELECT stdev(column1) FROM (VALUES (4))"), std::nullopt);  // n - 1 = 0
}

TEST_F(SqlFunctions, EachGroupKeepsItsOwnValues) {
  Stmt s = db_.prepare(
      "SELECT column1, median(column2), percentile(column2, 25), stdev(column2) FROM (VALUES "
      "('a', 1), ('b', 10), ('a', 3), ('b', 30), ('a', 2)) GROUP BY column1 ORDER BY column1");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "a");
  EXPECT_EQ(s.column_double(1), 2.0);
  EXPECT_EQ(s.column_double(2), 1.5);
  EXPECT_EQ(s.column_double(3), 1.0);
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "b");
  EXPECT_EQ(s.column_double(1), 20.0);
  EXPECT_EQ(s.column_double(2), 15.0);
  EXPECT_EQ(s.column_double(3), std::sqrt(200.0));
  EXPECT_FALSE(s.step());
}

TEST_F(SqlFunctions, BadArgumentsAreSqlErrors) {
  for (const char* sql :
       {"SELECT percentile(column1, 101) FROM (VALUES (1))",
        "SELECT percentile(column1, -1) FROM (VALUES (1))",
        "SELECT percentile(column1, NULL) FROM (VALUES (1))",
        "SELECT percentile(column1, 'high') FROM (VALUES (1))",
        "SELECT percentile(column1, column1) FROM (VALUES (10), (20))",  // p varies in a group
        "SELECT median(column1) FROM (VALUES ('abc'))",
        "SELECT stdev(column1) FROM (VALUES (1), (x'00'))"}) {
    Stmt s = db_.prepare(sql);
    EXPECT_THROW(s.step(), Error) << sql;
  }
}

TEST(SqlFunctionArithmetic, PercentileSortedAndStdev) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_EQ(percentile_sorted(v, 0), 1.0);
  EXPECT_EQ(percentile_sorted(v, 50), 2.5);
  EXPECT_EQ(percentile_sorted(v, 100), 4.0);
  EXPECT_EQ(percentile_sorted({5}, 37), 5.0);
  EXPECT_EQ(stdev({1, 3}), std::sqrt(2.0));
}

}  // namespace
}  // namespace llmbench
