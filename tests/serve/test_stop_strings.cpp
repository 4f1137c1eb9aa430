// Stop strings over growing text (tools/serve/stop_strings.h): a match across pieces, the
// text held back while it could still begin a stop string (and never half a UTF-8 character),
// the earliest match winning, include_stop_str_in_output, and nothing after a match.
#include <gtest/gtest.h>

#include "tools/serve/stop_strings.h"

namespace llmbench {
namespace {

TEST(StopStrings, MatchesAcrossPiecesAndHoldsBackAPossibleStart) {
  StopStrings s({"END"}, false);
  EXPECT_EQ(s.feed("abc"), "a");   // the last 2 bytes (the longest stop less one) are held
  EXPECT_EQ(s.feed("E"), "b");
  EXPECT_EQ(s.feed("N"), "c");     // "EN" held
  EXPECT_FALSE(s.stopped());
  EXPECT_EQ(s.feed("Dxyz"), "");   // the match: nothing of it goes out
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.matched(), "END");
  EXPECT_EQ(s.feed("more"), "");
  EXPECT_EQ(s.flush(), "");
}

TEST(StopStrings, TextBeforeTheMatchAndIncludeStopStr) {
  StopStrings a({"\n\n", "###"}, false);
  std::string out = a.feed("one\n");
  out += a.feed("two#");
  out += a.feed("##three");
  EXPECT_EQ(out, "one\ntwo");
  EXPECT_EQ(a.matched(), "###");
  StopStrings b({"lo w"}, true);
  std::string got = b.feed("hel");
  got += b.feed("lo");
  got += b.feed(" world");
  EXPECT_EQ(got, "hello w");
}

TEST(StopStrings, EarliestMatchWinsAndFlushReturnsTheRest) {
  StopStrings a({"cd", "b"}, false);
  EXPECT_EQ(a.feed("abcd"), "a");
  EXPECT_EQ(a.matched(), "b");
  StopStrings none({"zzz"}, false);
  std::string got = none.feed("hello");
  got += none.flush();
  EXPECT_EQ(got, "hello");
  StopStrings empty({""}, false);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.feed("x"), "x");
}

TEST(StopStrings, NeverSplitsAUtf8Character) {
  StopStrings s({"abcd"}, false);  // holds 3 bytes
  // "é" is 2 bytes (C3 A9); the cut would fall inside it.
  std::string out = s.feed("xy\xC3\xA9z");
  EXPECT_EQ(out, "xy");
  out += s.flush();
  EXPECT_EQ(out, "xy\xC3\xA9z");
}

}  // namespace
}  // namespace llmbench
