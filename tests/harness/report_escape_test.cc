// Escaping of strings from outside (harness/report/escape.h).
#include <gtest/gtest.h>

#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

TEST(Escape, Html) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("a\x01"
                       "b\x7f"
                       "c\td\n"),
            "abc\td\n");
}

TEST(Escape, XmlTextAndAttributes) {
  EXPECT_EQ(XmlEscape("'\"<>&", false), "&apos;&quot;&lt;&gt;&amp;");
  EXPECT_EQ(XmlEscape("a\nb\x02", true), "a&#10;b");
  EXPECT_EQ(XmlEscape("a\nb", false), "a\nb");
}

TEST(Escape, Utf8IsSanitized) {
  EXPECT_EQ(SanitizeUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(SanitizeUtf8("end\xE2\x82"), "end\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated
}

TEST(Escape, MarkdownCellStaysOneCell) {
  EXPECT_EQ(MarkdownCell("a|b\nc `d` *e* <f>"), "a\\|b c \\`d\\` \\*e\\* \\<f\\>");
}

// Only what Markdown reads as syntax is escaped, and never as an HTML entity
// (a card once held 37 "&#39;" where its text had an apostrophe).
TEST(Escape, MarkdownCellWritesNoEntities) {
  EXPECT_EQ(MarkdownCell("it's \"q\" 1.5-2 (x) #3 a_b & [l](u) ~s~ \\"),
            "it's \"q\" 1.5-2 (x) #3 a_b \\& \\[l\\](u) \\~s\\~ \\\\");
  EXPECT_EQ(MarkdownCell("_a_ b_ x86_64"), "\\_a\\_ b\\_ x86_64");
  EXPECT_EQ(MarkdownCell("&#39;"), "\\&#39;");  // an entity in the input stays text
}

TEST(Escape, MarkdownCodeIsOneSpan) {
  EXPECT_EQ(MarkdownCode("sdpa_efficient"), "`sdpa_efficient`");
  EXPECT_EQ(MarkdownCode("a`b"), "``a`b``");
  EXPECT_EQ(MarkdownCode("`x"), "`` `x ``");
  EXPECT_EQ(MarkdownCode("a|b\nc"), "`a\\|b c`");
}

TEST(Escape, CodeFenceOutlastsBackticksInside) {
  EXPECT_EQ(CodeFenceFor("plain"), "```");
  EXPECT_EQ(CodeFenceFor("a ``` b"), "````");
  EXPECT_EQ(CodeFenceFor("`````"), "``````");
}

}  // namespace
}  // namespace samebits::harness::report
