// Reference files (harness/analysis/references.h): round trip, stable
// text, and parse errors that name the line.
#include "harness/analysis/references.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

ReferenceGroup Sample() {
  ReferenceGroup g;
  g.key = "libm-x86_64";
  g.math = {"libm", "glibc", "2.36", "0123456789abcdef"};
  g.revision = "5e0558ab7794aeeccb52e07cb71cb11cd104e83e-dirty";
  g.lines.push_back(
      {"synthetic:wide", "classic", 0, "prefill", 11, 17, 0x1, 0xffffffffffffffffULL});
  g.lines.push_back({"synthetic:tiny", "classic", 1, "decode", 12, 3, 0x2, 0x20});
  g.lines.push_back({"synthetic:tiny", "classic", 0, "prefill", 11, 17, 0x3, 0x30});
  g.lines.push_back({"/models/my model.gguf", "long%run", 0, "extend", 0, 0, 0x4, 0x40});
  return g;
}

std::string Valid() {
  return "# comment\n"
         "format 1\n"
         "group portable\n"
         "math-library samebits-portable 1 00000000000000aa\n"
         "synthetic:tiny classic 0 prefill 11 17 0000000000000001 0000000000000002\n"
         "synthetic:tiny classic 1 decode 12 18 0000000000000003 0000000000000004\n";
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseReferenceGroup(text, "references/portable.txt");
  } catch (const ReferenceError& e) {
    return e.what();
  }
  return "";
}

TEST(References, RoundTripIsExactAndSorted) {
  const ReferenceGroup g = Sample();
  const std::string text = FormatReferenceGroup(g);
  const ReferenceGroup back = ParseReferenceGroup(text, "x.txt");
  EXPECT_EQ(back.key, g.key);
  EXPECT_EQ(back.math.name, "glibc");
  EXPECT_EQ(back.math.version, "2.36");
  EXPECT_EQ(back.math.fingerprint, "0123456789abcdef");
  EXPECT_EQ(back.math.profile, "libm");
  EXPECT_EQ(back.revision, g.revision);
  ASSERT_EQ(back.lines.size(), 4u);
  // Sorted by checkpoint, scenario, step; the odd names survive encoding.
  EXPECT_EQ(back.lines[0].checkpoint, "/models/my model.gguf");
  EXPECT_EQ(back.lines[0].scenario, "long%run");
  EXPECT_EQ(back.lines[1].checkpoint, "synthetic:tiny");
  EXPECT_EQ(back.lines[1].step, 0);
  EXPECT_EQ(back.lines[3].xxh3_64, 0xffffffffffffffffULL);
  // Formatting is a fixed point: the same group always gives the same text.
  EXPECT_EQ(FormatReferenceGroup(back), text);
  EXPECT_NE(text.find("\nsynthetic:tiny classic 1 decode 12 3 0000000000000002 0000000000000020\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("/models/my%20model.gguf long%25run 0 extend"), std::string::npos);
}

TEST(References, StepsOfAPairComeInOrder) {
  const ReferenceGroup g = Sample();
  EXPECT_TRUE(g.Has("synthetic:tiny", "classic"));
  EXPECT_FALSE(g.Has("synthetic:tiny", "long"));
  const auto steps = g.Steps("synthetic:tiny", "classic");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].index, 0);
  EXPECT_EQ(steps[1].xxh3_64, 0x20u);
}

TEST(References, GroupKeys) {
  EXPECT_EQ(ReferenceGroupKey({"portable"}, "x86_64"), "portable");
  EXPECT_EQ(ReferenceGroupKey({"portable"}, "aarch64"), "portable");
  EXPECT_EQ(ReferenceGroupKey({"libm"}, "x86_64"), "libm-x86_64");
  EXPECT_EQ(ReferenceFileName("libm-x86_64"), "libm-x86_64.txt");
}

// The int8 profile keys its groups as the math profiles do: its portable
// group serves every architecture, its libm groups name theirs after the
// profile; and every key reads back into the profile it was made from.
TEST(References, Int8GroupKeysRoundTrip) {
  EXPECT_EQ(ReferenceGroupKey({"portable", "int8"}, "x86_64"), "portable-int8");
  EXPECT_EQ(ReferenceGroupKey({"portable", "int8"}, "s390x"), "portable-int8");
  EXPECT_EQ(ReferenceGroupKey({"libm", "int8"}, "aarch64"), "libm-int8-aarch64");
  EXPECT_EQ(ReferenceGroupKey({"portable", "exact"}, "aarch64"), "portable");
  EXPECT_EQ(ReferenceGroupKey({"portable", "int8"}, "x86_64", "llama.cpp"),
            "llama.cpp/portable-int8");
  struct Case {
    NumericProfile profile;
    std::string arch, engine;
  };
  const std::vector<Case> cases = {{{"portable", "exact"}, "", ""},
                                   {{"libm", "exact"}, "x86_64", ""},
                                   {{"portable", "int8"}, "", ""},
                                   {{"libm", "int8"}, "x86_64", ""},
                                   {{"libm", "int8"}, "aarch64", "llama.cpp"}};
  for (const Case& c : cases) {
    const std::string key =
        ReferenceGroupKey(c.profile, c.arch.empty() ? "s390x" : c.arch, c.engine);
    const ReferenceGroupKeyParts parts = ParseReferenceGroupKey(key);
    EXPECT_EQ(parts.profile, c.profile) << key;
    EXPECT_EQ(parts.arch, c.arch) << key;
    EXPECT_EQ(parts.engine, c.engine) << key;
  }
  // A file's group line gives the math profile and the dot product.
  for (const auto& [key, math, quant_dot] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"portable", "portable", "exact"},
           {"libm-x86_64", "libm", "exact"},
           {"portable-int8", "portable", "int8"},
           {"libm-int8-x86_64", "libm", "int8"}}) {
    std::string text = Valid();
    text.replace(text.find("group portable"), 14, "group " + key);
    const ReferenceGroup g = ParseReferenceGroup(text, key + ".txt");
    EXPECT_EQ(g.key, key);
    EXPECT_EQ(g.math.profile, math) << key;
    EXPECT_EQ(g.quant_dot, quant_dot) << key;
    const ReferenceGroup back = ParseReferenceGroup(FormatReferenceGroup(g), key + ".txt");
    EXPECT_EQ(back.math.profile, math) << key;
    EXPECT_EQ(back.quant_dot, quant_dot) << key;
    EXPECT_EQ(FormatReferenceGroup(back), FormatReferenceGroup(g)) << key;
  }
}

TEST(References, ParseErrorsNameTheFileAndLine) {
  EXPECT_EQ(ErrorOf(Valid()), "");
  std::string text = Valid();
  text.replace(text.find("0000000000000003"), 16, "000000000000000G");
  EXPECT_EQ(ErrorOf(text), "references/portable.txt:6: fnv1a64 must be 16 lower-case hex digits");
  EXPECT_EQ(ErrorOf(Valid() + "synthetic:tiny classic 2 decode 13\n"),
            "references/portable.txt:7: expected 8 fields (checkpoint scenario step kind position "
            "token fnv1a64 xxh3_64), found 5");
  EXPECT_EQ(ErrorOf("format 2\n"),
            "references/portable.txt:1: format 2 is not one this samebits reads (1)");
  EXPECT_EQ(ErrorOf("group portable\n"),
            "references/portable.txt:1: the first line that is not a comment must be `format 1`");
  EXPECT_EQ(ErrorOf(Valid() +
                    "synthetic:tiny classic 1 decode 12 18 0000000000000003 0000000000000004\n"),
            "references/portable.txt:7: step 1 of synthetic:tiny classic appears twice");
  EXPECT_EQ(ErrorOf(Valid() +
                    "synthetic:tiny classic 3 sample 12 18 0000000000000003 0000000000000004\n"),
            "references/portable.txt:7: kind must be prefill, decode or extend, not 'sample'");
  EXPECT_EQ(ErrorOf(Valid() +
                    "synthetic:tiny classic 3 decode 14 18 0000000000000005 0000000000000006\n"),
            "references/portable.txt: synthetic:tiny classic: step 2 is missing");
  EXPECT_EQ(ErrorOf(""), "references/portable.txt: empty (no `format` line)");
  EXPECT_EQ(ErrorOf("format 1\ngroup portable\n"),
            "references/portable.txt: no `math-library` line");
  EXPECT_EQ(ErrorOf("format 1\ngroup portable\nmath-library a b c\n"),
            "references/portable.txt:3: expected `math-library <name> <version> <16 hex digit "
            "fingerprint>`");
  EXPECT_EQ(
      ErrorOf("format 1\nsynthetic:tiny classic 0 prefill 1 1 0000000000000001 0000000000000001\n"),
      "references/portable.txt:2: a data line before the `group` and `math-library` lines");
  EXPECT_EQ(ErrorOf("format 1\ngroup portable\nmath-library a b 0000000000000001\n"
                    "synthetic:tiny classic -1 prefill 1 1 0000000000000001 0000000000000001\n"),
            "references/portable.txt:4: step must be a non-negative integer, not '-1'");
}

TEST(References, CrLfAndCommentsAreAccepted) {
  std::string text = Valid();
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(ParseReferenceGroup(crlf, "x").lines.size(), 2u);
}

TEST(References, SaveAndLoadFromAFolder) {
  testing::TempDir dir;
  EXPECT_FALSE(LoadReferenceGroup(dir.path(), "portable").has_value());
  ReferenceGroup g = Sample();
  g.key = "portable";
  SaveReferenceGroup(dir.File("refs"), g);
  const auto loaded = LoadReferenceGroup(dir.File("refs"), "portable");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->lines.size(), 4u);
  // A file whose group line disagrees with its name is refused.
  testing::WriteFile(dir.File("refs/libm-x86_64.txt"), Valid());
  EXPECT_THROW(LoadReferenceGroup(dir.File("refs"), "libm-x86_64"), ReferenceError);
}

}  // namespace
}  // namespace samebits::harness
