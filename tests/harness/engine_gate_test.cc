// `samebits gate --engine-profile FILE` end to end: an engine the harness
// knows only from its profile is gated with the profile's configurations
// and baseline; a difference the profile declares is KNOWN (exit 0), one
// it does not declare is FAIL, and a declared one that no longer differs is
// FIXED (exit 1, lit's XPASS); the store and `gate --run` keep the engine,
// its axis values and its declarations; references are the engine's own
// (references/ENGINE/); and the minimal Python adapter, with axes the
// harness has never heard of, passes through its profile alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class EngineGate : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(references_); }

  // Writes the stand-in's profile running the stand-in under `fault`, with
  // `known` as its known differences.
  std::string Profile(const std::string& fault, const nlohmann::json& known) {
    std::ifstream in(Source("tests/standins/standin_profile.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["command"] = {FaultyEngine(dir_.path(), fault), "run"};
    j["known_differences"] = known;
    const std::string path = (dir_.path() / ("profile-" + fault + ".json")).string();
    std::ofstream(path) << j.dump(2);
    return path;
  }

  // Runs `samebits gate` on the stand-in's profile; `extra` after.
  CommandResult Gate(const std::string& profile, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {BinDir() + "/samebits",
                                     "gate",
                                     "--engine-profile",
                                     profile,
                                     "--checkpoint",
                                     "synthetic:tiny",
                                     "--scenario",
                                     WriteScenario(dir_.path()),
                                     "--config",
                                     "reference,cpu-t1,cpu-t2,cpu-t3",
                                     "--db",
                                     db_,
                                     "--references-dir",
                                     references_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  // The result code of `config` in the newest stored run.
  std::string StoredCode(const std::string& config) {
    for (const harness::CellResult& c : LatestRun(db_).cells) {
      if (c.config.name == config) return harness::ResultCodeName(c.code);
    }
    return "(no such cell)";
  }

  const nlohmann::json kThreeDiffers = nlohmann::json::parse(
      R"([{"axis": "threads", "values": ["3"], "reason": "a test's declared difference"}])");

  TempDir dir_{"engine-gate"};
  std::string db_ = (dir_.path() / "runs.db").string();
  std::string references_ = (dir_.path() / "references").string();
};

TEST_F(EngineGate, AnUndeclaredDifferenceFailsOnlyItsConfiguration) {
  const CommandResult r = Gate(Profile("wrong-hash-at-3-threads", nlohmann::json::array()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(StoredCode("cpu-t3"), "FAIL");
  EXPECT_EQ(StoredCode("cpu-t2"), "PASS");
  EXPECT_EQ(StoredCode("reference"), "PASS");
  EXPECT_THAT(r.output, HasSubstr("reference and cpu-t3 first differ at step"));
}

TEST_F(EngineGate, ADeclaredDifferenceIsKnownAndTheGatePasses) {
  const std::string profile = Profile("wrong-hash-at-3-threads", kThreeDiffers);
  // The engine's references first: made from the baseline, in a folder of its own.
  const CommandResult made = RunCommand(
      {BinDir() + "/samebits", "reference", "generate", "--engine-profile", profile, "--checkpoint",
       "synthetic:tiny", "--scenario", WriteScenario(dir_.path()), "--config",
       "reference,cpu-t1,cpu-t2,cpu-t3", "--db", db_, "--references-dir", references_});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_TRUE(std::filesystem::is_regular_file(references_ + "/standin/portable.txt"))
      << made.output;
  const CommandResult r = Gate(profile);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(StoredCode("cpu-t3"), "KNOWN");
  EXPECT_EQ(StoredCode("cpu-t2"), "PASS");
  EXPECT_THAT(r.output, HasSubstr("KNOWN"));
  // Judged again from the store, the declaration and the engine are kept.
  const CommandResult again = RunCommand({BinDir() + "/samebits", "gate", "--run", "latest", "--db",
                                          db_, "--references-dir", references_});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(LatestRun(db_).cells.front().config.engine, "standin");
}

TEST_F(EngineGate, ADeclaredDifferenceThatNoLongerDiffersIsFixedAndFails) {
  const CommandResult r = Gate(Profile("ok", kThreeDiffers));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(StoredCode("cpu-t3"), "FIXED");
  EXPECT_THAT(r.output, HasSubstr("FIXED"));
}

TEST_F(EngineGate, ReferencesAreTheEnginesOwn) {
  const CommandResult r = Gate(Profile("ok", nlohmann::json::array()));
  // No references/standin/portable.txt yet: said, never samebits-engine's file.
  EXPECT_THAT(r.output, HasSubstr("standin/portable.txt"));
  EXPECT_THAT(r.output, Not(HasSubstr("references/portable.txt")));
  EXPECT_THAT(r.output, HasSubstr("reference generate --engine standin"));
}

TEST_F(EngineGate, AConfigurationOutsideTheProfilesGrammarIsRefusedBeforeAnyChildRuns) {
  // A hanging engine would take the timeout if anything ran.
  const CommandResult r =
      Gate(Profile("hang", nlohmann::json::array()), {"--config", "cpu-x9", "--timeout", "30"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--config"));
}

// A profile's `build` runs only when asked (--build), before any child, as
// an argv list in the profile's folder (never through a shell); a failed
// build is exit 2 with its output's tail, and a profile without one says so.
TEST_F(EngineGate, TheProfilesBuildRunsWhenAskedAsAnArgvListInItsFolder) {
  const auto profile_with = [&](const std::string& name, const nlohmann::json& build) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(Profile("ok", nlohmann::json::array())));
    j["command"] = {"./engine-built", "run"};
    if (!build.is_null()) j["build"] = build;
    const std::string path = (dir_.path() / (name + ".json")).string();
    std::ofstream(path) << j.dump(2);
    return path;
  };
  const std::string builds =
      profile_with("builds", {"/bin/ln", "-s", FaultyEngine(dir_.path(), "ok"), "engine-built"});
  const CommandResult unbuilt = Gate(builds);
  EXPECT_EQ(unbuilt.exit_code, 2) << unbuilt.output;
  EXPECT_THAT(unbuilt.output, HasSubstr("build it with its 'build' command"));
  const CommandResult built = Gate(builds, {"--build"});
  EXPECT_THAT(built.output, HasSubstr("built engine"));
  EXPECT_THAT(built.output, HasSubstr("PASS        : 4"));  // (no reference yet: exit 1)

  const CommandResult failed =
      Gate(profile_with("fails", {"/bin/sh", "-c", "echo the compiler said no >&2; exit 3"}),
           {"--build"});
  EXPECT_EQ(failed.exit_code, 2) << failed.output;
  EXPECT_THAT(failed.output, HasSubstr("failed (exit 3)"));
  EXPECT_THAT(failed.output, HasSubstr("the compiler said no"));

  const CommandResult none = Gate(profile_with("none", nullptr), {"--build"});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_THAT(none.output, HasSubstr("the profile declares none"));

  // A value that would mean something to a shell is one argument, as given.
  const CommandResult quoted =
      Gate(profile_with("quoted", {"/bin/echo", "$(touch pwned); touch pwned2"}), {"--build"});
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "pwned")) << quoted.output;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "pwned2")) << quoted.output;
}

TEST_F(EngineGate, AnEngineNameWithoutAProfileIsRefused) {
  const CommandResult r =
      RunCommand({BinDir() + "/samebits", "gate", "--engine", "no-such-engine", "--db", db_});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("engines/no-such-engine.json"));
}

TEST_F(EngineGate, TheMinimalPythonAdapterPassesThroughItsProfileAlone) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const CommandResult r = RunCommand({BinDir() + "/samebits", "gate", "--engine-profile",
                                      Source("adapters/minimal-python/profile.json"), "--db", db_,
                                      "--references-dir", references_});
  // Its default matrix (the profile's `matrix`): the baseline, the reversed
  // sum (declared to differ) and two tiles that never change a bit.
  EXPECT_EQ(StoredCode("forward"), "PASS") << r.output;
  EXPECT_EQ(StoredCode("reverse"), "KNOWN") << r.output;
  EXPECT_EQ(StoredCode("forward-tile1"), "PASS") << r.output;
  EXPECT_EQ(StoredCode("forward-tile7"), "PASS") << r.output;
}

}  // namespace
}  // namespace samebits::standin
