// A scenario replayed with another run's tokens (harness/runner/forced_scenario.h):
// its decode steps become single-token extends of the tokens A fed. The
// end-to-end check: samebits-engine replaying its own tokens gives every
// row's bits again (position, fed token and hashes), on the default
// scenarios, the sampled one and the one that crosses sliding windows.
#include "harness/runner/forced_scenario.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "harness/runner/cell_runner.h"
#include "harness/runner/matrix.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

using harness::testing::MakeCell;
using harness::testing::ReadFile;

const std::string kClassic = R"({"name": "classic", "prompt": {"tokens": [1, 2]},
  "steps": [{"prefill": "prompt"}, {"decode": 2}, {"extend": {"tokens": [5]}}, {"decode": 1}]})";

TEST(ForcedScenario, EachDecodeBecomesAnExtendOfTheTokenAFed) {
  harness::CellResult a = MakeCell("synthetic:tiny", "classic", "reference", 1, 5);
  a.steps[3].kind = "extend";  // prefill, decode, decode, extend, decode
  std::string why;
  const std::optional<std::string> forced = ForcedTokenScenario(kClassic, a.steps, &why);
  ASSERT_TRUE(forced) << why;
  const nlohmann::json j = nlohmann::json::parse(*forced);
  EXPECT_EQ(j["name"], "classic-forced");
  EXPECT_EQ(j["prompt"], nlohmann::json::parse(R"({"tokens": [1, 2]})"));
  const nlohmann::json expected = nlohmann::json::parse(
      R"([{"prefill": "prompt"}, {"extend": {"tokens": [41]}}, {"extend": {"tokens": [42]}},
          {"extend": {"tokens": [5]}}, {"extend": {"tokens": [44]}}])");
  EXPECT_EQ(j["steps"], expected);
}

TEST(ForcedScenario, DecodeRowsThatDoNotMatchTheScenarioAreRefused) {
  std::string why;
  harness::CellResult a = MakeCell("synthetic:tiny", "classic", "reference", 1, 3);
  EXPECT_FALSE(ForcedTokenScenario(kClassic, a.steps, &why));
  EXPECT_NE(why.find("A has 2 decode rows, fewer than"), std::string::npos) << why;
  a = MakeCell("synthetic:tiny", "classic", "reference", 1, 6);
  EXPECT_FALSE(ForcedTokenScenario(kClassic, a.steps, &why));
  EXPECT_NE(why.find("A has 5 decode rows, the scenario 3"), std::string::npos) << why;
  EXPECT_FALSE(ForcedTokenScenario("[1]", a.steps, &why));
  EXPECT_NE(why.find("not a JSON object"), std::string::npos) << why;
}

harness::CellResult RunEngine(const std::string& scenario_file, const std::string& config) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario_file = scenario_file;
  cell.scenario = ScenarioName(scenario_file);
  cell.config.name = config;
  cell.config.kernels = config == "reference" ? "reference" : "cpu";
  cell.config.threads = config == "cpu-t2" ? 2 : 1;
  RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = harness::testing::BinDir() + "/samebits-engine";
  return RunCell(cell, options);
}

TEST(ForcedScenario, SamebitsEngineReplayingItsOwnTokensGivesEveryRowAgain) {
  harness::testing::TempDir dir;
  for (const std::string name : {"classic", "sampled", "window"}) {
    for (const std::string config : {"reference", "cpu-t2"}) {
      SCOPED_TRACE(name + " " + config);
      const std::string file = std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/" + name + ".json";
      const harness::CellResult own = RunEngine(file, config);
      ASSERT_EQ(own.code, harness::ResultCode::kPass) << own.message;
      std::string why;
      const std::optional<std::string> text = ForcedTokenScenario(ReadFile(file), own.steps, &why);
      ASSERT_TRUE(text) << why;
      const std::string forced_file = dir.File(name + "-forced.json");
      harness::testing::WriteFile(forced_file, *text);
      const harness::CellResult forced = RunEngine(forced_file, config);
      ASSERT_EQ(forced.code, harness::ResultCode::kPass) << forced.message;
      ASSERT_EQ(forced.steps.size(), own.steps.size());
      int decodes = 0;
      for (size_t i = 0; i < own.steps.size(); ++i) {
        const harness::StepRecord &x = own.steps[i], &y = forced.steps[i];
        EXPECT_EQ(y.kind, x.kind == "decode" ? "extend" : x.kind) << i;
        EXPECT_EQ(y.position, x.position) << i;
        EXPECT_EQ(y.input_token, x.input_token) << i;
        EXPECT_EQ(y.xxh3_64, x.xxh3_64) << i;
        EXPECT_EQ(y.fnv1a64, x.fnv1a64) << i;
        decodes += x.kind == "decode";
      }
      EXPECT_GT(decodes, 0);
    }
  }
}

}  // namespace
}  // namespace samebits::runner
