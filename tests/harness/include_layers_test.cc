// The layer checker (include_layers.h) on crafted trees: it names the file,
// line and rule of each include that breaks the order, and passes a tree
// that keeps it. (The real tree is checked by `samebits-check-layers`, the
// ctest harness.IncludeLayers.)
#include "tests/harness/include_layers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/harness/harness_test_util.h"

namespace samebits::layers {
namespace {

using harness::testing::TempDir;
using harness::testing::WriteFile;
using ::testing::HasSubstr;

constexpr const char* kOrder = R"(# top first
harness/cli
harness/store harness/report   # peers
harness/analysis
engine/model
engine/numerics
only harness/ engine/numerics
)";

std::vector<std::string> Described(const CheckResult& r) {
  std::vector<std::string> out;
  for (const Violation& v : r.violations) out.push_back(Describe(v));
  return out;
}

TEST(IncludeLayers, ATreeThatKeepsTheOrderPasses) {
  TempDir dir;
  WriteFile(dir.File("harness/cli/main.cc"),
            "#include \"harness/cli/flags.h\"\n#include \"harness/store/store.h\"\n"
            "#include \"harness/analysis/results.h\"\n#include <vector>\n");
  WriteFile(dir.File("harness/analysis/results.h"), "#include \"engine/numerics/hash.h\"\n");
  WriteFile(dir.File("engine/model/config.cc"), "#include \"engine/numerics/hash.h\"\n");
  const CheckResult r = CheckIncludes(dir.path(), ParseLayerOrder(kOrder));
  EXPECT_EQ(r.files, 3);
  EXPECT_EQ(r.includes, 5);
  EXPECT_THAT(Described(r), ::testing::IsEmpty());
}

TEST(IncludeLayers, AnIncludeOfALayerAboveFailsWithFileLineAndRule) {
  TempDir dir;
  WriteFile(dir.File("harness/analysis/diff.h"),
            "// ulp\n#pragma once\n#include \"harness/analysis/results.h\"\n"
            "#include \"harness/report/ulp.h\"\n");
  const CheckResult r = CheckIncludes(dir.path(), ParseLayerOrder(kOrder));
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].file, "harness/analysis/diff.h");
  EXPECT_EQ(r.violations[0].line, 4);
  EXPECT_EQ(Describe(r.violations[0]),
            "harness/analysis/diff.h:4: includes \"harness/report/ulp.h\": harness/analysis may "
            "not include harness/report, a layer above it (harness/store harness/report is above "
            "harness/analysis)");
}

TEST(IncludeLayers, PeersMayNotIncludeEachOther) {
  TempDir dir;
  WriteFile(dir.File("harness/report/bench_html.h"), "#include \"harness/store/bench.h\"\n");
  const CheckResult r = CheckIncludes(dir.path(), ParseLayerOrder(kOrder));
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_THAT(r.violations[0].rule, HasSubstr("are peers"));
}

TEST(IncludeLayers, TheEngineMayNotIncludeTheHarness) {
  TempDir dir;
  WriteFile(dir.File("engine/model/x.cc"), "  #  include \"harness/analysis/results.h\"\n");
  const CheckResult r = CheckIncludes(dir.path(), ParseLayerOrder(kOrder));
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].line, 1);
  EXPECT_THAT(r.violations[0].rule, HasSubstr("a layer above it"));
}

TEST(IncludeLayers, AnOnlyRuleKeepsTheHarnessFromTheModel) {
  TempDir dir;
  // engine/model is below every harness layer, but `only` leaves it out.
  WriteFile(dir.File("harness/analysis/x.cc"), "#include \"engine/model/config.h\"\n");
  const CheckResult r = CheckIncludes(dir.path(), ParseLayerOrder(kOrder));
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].rule, "harness/analysis may use outside harness/ only engine/numerics");
}

TEST(IncludeLayers, AFolderInNoLayerIsNamed) {
  TempDir dir;
  WriteFile(dir.File("harness/profiles/p.cc"), "#include \"harness/analysis/results.h\"\n");
  WriteFile(dir.File("harness/cli/c.cc"), "#include \"harness/newthing/n.h\"\n");
  const std::vector<std::string> got =
      Described(CheckIncludes(dir.path(), ParseLayerOrder(kOrder)));
  EXPECT_THAT(got, ::testing::ElementsAre(
                       "harness/cli/c.cc:1: includes \"harness/newthing/n.h\": folder "
                       "harness/newthing is in no layer: add it to tests/harness/layers.txt",
                       "harness/profiles/p.cc:0: folder harness/profiles is in no layer: add it "
                       "to tests/harness/layers.txt"));
}

TEST(IncludeLayers, AMalformedOrderIsRefusedWithItsLine) {
  EXPECT_THROW(
      {
        try {
          ParseLayerOrder("harness/cli\nharness/store\nharness/cli\n");
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "layers line 3: 'harness/cli' is already in a layer above");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(ParseLayerOrder("harness\n"), std::runtime_error);
  EXPECT_THROW(ParseLayerOrder("only harness/\n"), std::runtime_error);
}

}  // namespace
}  // namespace samebits::layers
