// `samebits conform` end to end: two stand-in runs with raw logit dumps are
// measured against each other from their stores: a run against itself
// conforms with NMSE 0; a build whose logits are other numbers deviates
// from step 0; the reports are written in every format.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

using ::testing::HasSubstr;

class ConformCli : public ::testing::Test {
 protected:
  // Runs cpu-t1 and cpu-t3 of the stand-in under `fault` with dumps into
  // the store `db`.
  void RunInto(const std::string& db, const std::string& fault) {
    const CommandResult r = RunCommand(
        {BinDir() + "/samebits", "run", "-q", "--dump-logits", "--engine",
         FaultyEngine(dir_.path(), fault), "--checkpoint", "synthetic:tiny", "--scenario",
         scenario_, "--config", "cpu-t1,cpu-t3", "--timeout", "20", "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.command << "\n" << r.output;
  }

  std::string Db(const std::string& name) { return (dir_.path() / (name + ".db")).string(); }

  TempDir dir_{"conform_cli"};
  std::string scenario_ = WriteScenario(dir_.path());
};

TEST_F(ConformCli, ARunConformsToItselfAndAnotherBuildDeviates) {
  RunInto(Db("ok"), "ok");
  RunInto(Db("changed"), "portable-changed");
  const CommandResult same = RunCommand({BinDir() + "/samebits", "conform", Db("ok"), Db("ok"),
                                         "--config-a", "cpu-t1", "--config-b", "cpu-t3"});
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, HasSubstr("CONFORMS: 1 compared pair within NMSE <= 0.0001."));
  EXPECT_THAT(same.output, HasSubstr("NMSE max 0 mean 0"));
  // Identical rows: nothing near a flip, every statistic 0 (one defined
  // error, the binomial one, 0 too).
  EXPECT_THAT(same.output, HasSubstr("CONFORMS (stable)"));
  EXPECT_THAT(same.output, HasSubstr("mean KLD 0 ± 0"));
  EXPECT_THAT(same.output, HasSubstr("same top-1 100 ± 0 %"));

  const std::string json = (dir_.path() / "conform.json").string();
  const std::string junit = (dir_.path() / "conform.xml").string();
  const CommandResult other =
      RunCommand({BinDir() + "/samebits", "conform", Db("ok"), Db("changed"), "--config-a",
                  "cpu-t1", "--report-json", json, "--report-junit", junit, "--report-md",
                  (dir_.path() / "conform.md").string(), "--report-html",
                  (dir_.path() / "conform.html").string()});
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_THAT(other.output, HasSubstr("DEVIATES"));
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["pairs"][0]["verdict"], "DEVIATES");
  EXPECT_EQ(j["pairs"][0]["config_b"], "cpu-t1");  // the same name, chosen by default
  // The changed build's logits are other numbers from the first step on.
  EXPECT_EQ(j["pairs"][0]["first_deviating_step"], 0);
  std::ifstream x(junit);
  const std::string xml((std::istreambuf_iterator<char>(x)), std::istreambuf_iterator<char>());
  // The verdict names the first step, its worst token and the metric.
  EXPECT_THAT(other.output, HasSubstr("DEVIATES at step 0, token "));
  EXPECT_EQ(j["pairs"][0]["verdict_line"].get<std::string>().rfind("DEVIATES at step 0, token ", 0),
            0u);
  EXPECT_THAT(xml, HasSubstr("<failure type=\"DEVIATES\" message=\"DEVIATES at step 0, token "));
  EXPECT_THAT(xml, HasSubstr("KLD mean ± se: "));
}

TEST_F(ConformCli, WithoutDumpsNothingIsComparedAndBadValuesAreRefused) {
  const CommandResult r =
      RunCommand({BinDir() + "/samebits", "run", "-q", "--engine", FaultyEngine(dir_.path(), "ok"),
                  "--checkpoint", "synthetic:tiny", "--scenario", scenario_, "--config", "cpu-t1",
                  "--timeout", "20", "--db", Db("plain")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const CommandResult none =
      RunCommand({BinDir() + "/samebits", "conform", Db("plain"), Db("plain")});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_THAT(none.output, HasSubstr("has no raw logit dump"));
  for (const char* bad : {"-1", "nan", "inf", "x"}) {
    const CommandResult refused = RunCommand(
        {BinDir() + "/samebits", "conform", Db("plain"), Db("plain"), "--max-nmse", bad});
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.output;
    EXPECT_THAT(refused.output, HasSubstr("is not a finite number of at least 0")) << bad;
  }
}

// Engines as operands: each is run on --checkpoint x --scenario with dumps
// and measured like a stored run (samebits-engine's reference pass against
// its cpu pass at 2 threads: NMSE 0 on every step, as the contract makes
// them the same bits); a stored run against an engine works too.
TEST_F(ConformCli, EnginesAreRunAndMeasured) {
  const std::string engine = "engine:" + OwnEngineProfile(dir_.path());
  const CommandResult both = RunCommand(
      {BinDir() + "/samebits", "conform", engine, engine, "--config-a", "reference", "--config-b",
       "cpu-t2", "--checkpoint", "synthetic:tiny,synthetic:gemma", "--scenario", "classic,window",
       "--report-json", (dir_.path() / "engines.json").string()});
  EXPECT_EQ(both.exit_code, 0) << both.output;
  EXPECT_THAT(both.output, HasSubstr("A: engine samebits (reference)"));
  EXPECT_THAT(both.output, HasSubstr("B: engine samebits (cpu-t2)"));
  EXPECT_THAT(both.output, HasSubstr("CONFORMS: 4 compared pairs within NMSE <= 0.0001."));
  std::ifstream in(dir_.path() / "engines.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["pairs"].size(), 4u);
  for (const nlohmann::json& pair : j["pairs"]) {
    EXPECT_EQ(pair["verdict"], "CONFORMS") << pair.dump();
    EXPECT_FALSE(pair.contains("context_divergence")) << pair.dump();
  }

  // A stored run of samebits-engine against the engine run here.
  const CommandResult stored =
      RunCommand({BinDir() + "/samebits", "run", "-q", "--dump-logits", "--engine",
                  BinDir() + "/samebits-engine", "--checkpoint", "synthetic:tiny", "--scenario",
                  Source("scenarios/classic.json"), "--config", "cpu-t1", "--db", Db("stored")});
  ASSERT_EQ(stored.exit_code, 0) << stored.output;
  const CommandResult mixed =
      RunCommand({BinDir() + "/samebits", "conform", Db("stored"), engine, "--config-b",
                  "reference", "--checkpoint", "synthetic:tiny", "--scenario", "classic"});
  EXPECT_EQ(mixed.exit_code, 0) << mixed.output;
  EXPECT_THAT(mixed.output, HasSubstr("(cpu-t1 vs reference)"));
  EXPECT_THAT(mixed.output, HasSubstr("steps 0-7 of 8"));
  EXPECT_THAT(mixed.output, HasSubstr("NMSE max 0 mean 0"));
}

TEST_F(ConformCli, EngineOperandsAreCheckedBeforeAnythingRuns) {
  const std::string engine = "engine:" + OwnEngineProfile(dir_.path());
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{engine, engine}, "an engine operand needs --checkpoint"},
      {{"engine:no-such-engine", engine, "--checkpoint", "synthetic:tiny"}, "no-such-engine"},
      {{"engine:", engine, "--checkpoint", "synthetic:tiny"}, "name an engine after 'engine:'"},
      {{engine, engine, "--checkpoint", "synthetic:tiny", "--config-b", "cpu-q7"}, "cpu-q7"},
      {{engine, engine, "--checkpoint", "synthetic:tiny", "--scenario", "no-such"},
       "--scenario no-such: neither a file nor"},
      {{Db("x"), Db("y"), "--checkpoint", "synthetic:tiny"}, "--checkpoint is for engine"}};
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {BinDir() + "/samebits", "conform"};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(message)) << r.command;
  }
}

}  // namespace
}  // namespace samebits::standin
