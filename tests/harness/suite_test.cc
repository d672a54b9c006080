// Suites (harness/runner/suite.h): loading, narrowing, the keys cells carry,
// and a missing checkpoint file turning its cells UNSUPPORTED with a reason.
#include "harness/runner/suite.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/runner/cell_arguments.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

using harness::testing::TempDir;
using harness::testing::WriteFile;

class SuiteTest : public ::testing::Test {
 protected:
  SuiteTest() {
    WriteFile(dir_.File("suite/weights.gguf"), "x");
    WriteFile(dir_.File("suite/a.json"), "{}\n");
    WriteFile(dir_.File("suite/b.json"), "{}\n");
    WriteFile(dir_.File("suite/suite.json"),
              R"({"pairs": [{"checkpoint": "gguf:weights.gguf", "scenarios": ["a", "b"]},
                            {"checkpoint": "llama2c:../gone/missing.bin", "scenarios": ["a"]}]})");
    options_.profile = harness::testing::OwnProfile();
    options_.configs = {"reference", "cpu-t2"};
  }
  std::vector<Cell> Expand(const std::vector<std::string>& checkpoints = {},
                           const std::vector<std::string>& scenarios = {}) {
    return ExpandSuite(LoadSuite(dir_.File("suite/suite.json")), options_, checkpoints, scenarios,
                       dir_.File("root"));
  }
  TempDir dir_;
  MatrixOptions options_;
};

// A suite's file is relative to the suite file's folder; the cell's key is
// the file relative to the project root, and the engine gets it absolute.
TEST_F(SuiteTest, CellsAreKeyedRelativeToTheRootAndRunTheFileNextToTheSuite) {
  const std::vector<Cell> cells = Expand();
  ASSERT_EQ(cells.size(), 6u);  // (2 + 1 scenarios) x 2 configurations
  EXPECT_EQ(cells[0].checkpoint, "gguf:../suite/weights.gguf");
  EXPECT_EQ(cells[0].scenario, "a");
  EXPECT_EQ(cells[0].config.name, "reference");
  EXPECT_EQ(cells[0].engine_checkpoint, "gguf:" + dir_.File("suite/weights.gguf"));
  EXPECT_EQ(EngineArguments(*harness::testing::OwnProfile(), cells[0], false)[2],
            cells[0].engine_checkpoint);
  EXPECT_TRUE(cells[0].supported);
  EXPECT_EQ(cells[2].scenario, "b");
}

TEST_F(SuiteTest, AMissingFileMakesItsCellsUnsupportedNamingTheFile) {
  const std::vector<Cell> cells = Expand();
  for (size_t i = 4; i < 6; ++i) {
    EXPECT_EQ(cells[i].checkpoint, "llama2c:../gone/missing.bin");  // dir/gone from dir/root
    EXPECT_FALSE(cells[i].supported);
    EXPECT_NE(cells[i].unsupported_reason.find("missing.bin"), std::string::npos);
    EXPECT_NE(cells[i].unsupported_reason.find(dir_.File("gone/missing.bin")), std::string::npos)
        << cells[i].unsupported_reason;
  }
}

TEST_F(SuiteTest, CheckpointAndScenarioNarrowTheSuite) {
  std::vector<Cell> cells = Expand({"gguf:../suite/weights.gguf"}, {"b"});
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].scenario, "b");
  cells = Expand({}, {"a"});
  EXPECT_EQ(cells.size(), 4u);
  EXPECT_THROW(Expand({"synthetic:tiny"}), std::invalid_argument);
  EXPECT_THROW(Expand({}, {"c"}), std::invalid_argument);
}

TEST_F(SuiteTest, MalformedSuitesAreRefusedNamingTheFile) {
  WriteFile(dir_.File("suite/bad.json"),
            R"({"pairs": [{"checkpoint": "gguf:x", "scenarios": ["nope"]}]})");
  try {
    LoadSuite(dir_.File("suite/bad.json"));
    FAIL() << "accepted a suite naming a scenario file that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nope.json"), std::string::npos) << e.what();
  }
  WriteFile(dir_.File("suite/notjson.json"), "{");
  EXPECT_THROW(LoadSuite(dir_.File("suite/notjson.json")), std::invalid_argument);
  EXPECT_THROW(LoadSuite(dir_.File("suite/absent.json")), std::invalid_argument);
}

TEST(ResolveCheckpoint, SyntheticNamesNoFileAndAbsolutePathsStay) {
  EXPECT_EQ(ResolveCheckpoint("synthetic:tiny", "/w", "/r").engine_spec, "synthetic:tiny");
  EXPECT_EQ(ResolveCheckpoint("synthetic:tiny", "/w", "/r").key, "synthetic:tiny");
  EXPECT_TRUE(ResolveCheckpoint("synthetic:tiny", "/w", "/r").file.empty());
  EXPECT_EQ(ResolveCheckpoint("fake:ok", "/w", "/r").key, "fake:ok");
  EXPECT_EQ(ResolveCheckpoint("gguf:/abs/x.gguf", "/w", "/r").engine_spec, "gguf:/abs/x.gguf");
  EXPECT_EQ(ResolveCheckpoint("gguf:/abs/x.gguf", "/w", "/r/p").key, "gguf:/abs/x.gguf");
  EXPECT_EQ(ResolveCheckpoint("../s/x.gguf", "/r/p", "/r").engine_spec, "/r/s/x.gguf");
  EXPECT_FALSE(ResolveCheckpoint("../s/x.gguf", "/r/p", "/r").exists);
}

// One rule: a relative file is relative to the folder it is given from, and
// one file has one key however it is named (the key of the default suite's
// files stays "gguf:../shared/..." from any working folder).
TEST(ResolveCheckpoint, OneFileHasOneKeyFromAnyFolder) {
  const std::string key = "gguf:../shared/checkpoints/x.gguf";
  EXPECT_EQ(ResolveCheckpoint("gguf:../shared/checkpoints/x.gguf", "/w/p", "/w/p").key, key);
  EXPECT_EQ(ResolveCheckpoint("gguf:../../shared/checkpoints/x.gguf", "/w/p/build", "/w/p").key,
            key);
  EXPECT_EQ(
      ResolveCheckpoint("gguf:../../../shared/checkpoints/x.gguf", "/w/p/scenarios/real", "/w/p")
          .key,
      key);
  EXPECT_EQ(ResolveCheckpoint("gguf:/w/shared/checkpoints/x.gguf", "/elsewhere", "/w/p").key, key);
  // The same words from another folder name another file, with another key.
  const ResolvedCheckpoint other =
      ResolveCheckpoint("gguf:../shared/checkpoints/x.gguf", "/w/p/build", "/w/p");
  EXPECT_EQ(other.key, "gguf:shared/checkpoints/x.gguf");
  EXPECT_EQ(other.engine_spec, "gguf:/w/p/shared/checkpoints/x.gguf");
  // Far from the root: absolute.
  EXPECT_EQ(ResolveCheckpoint("m.gguf", "/tmp/t", "/w/p").key, "/tmp/t/m.gguf");
}

}  // namespace
}  // namespace samebits::runner
