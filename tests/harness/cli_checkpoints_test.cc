// Class 4 of issue 43: a checkpoint that cannot run is refused before any
// cell runs. Every command that takes --checkpoint (from the program's own
// command list) is given a selection with a synthetic checkpoint the engine
// does not know, and one with a file that is not there: each must exit 2
// naming it (and, for the synthetic one, the checkpoints the engine knows),
// start no cell of the engine, and leave nothing behind (no store, no dump,
// no build). The engine is samebits-engine behind a script that logs every
// call, so a cell started is seen whatever the command prints. A command
// that takes --checkpoint and is added later fails here until it is given a
// way to run here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/harness/program_commands.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;
using standin::BinDir;
using standin::CommandResult;
using standin::RunCommand;
using standin::Source;
using standin::TempDir;
using ::testing::HasSubstr;

class CliCheckpoints : public ::testing::Test {
 protected:
  CliCheckpoints() : dir_("cli_checkpoints") {
    fs::create_directories(dir_.path() / "references");
    // samebits-engine behind a script that logs each call's arguments.
    engine_ = (dir_.path() / "logging-engine").string();
    std::ofstream(engine_) << "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " << standin::ShellQuote(Log())
                           << "\nexec " << standin::ShellQuote(BinDir() + "/samebits-engine")
                           << " \"$@\"\n";
    fs::permissions(engine_, fs::perms::owner_all);
    std::ifstream in(Source("engines/samebits.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["command"] = {engine_, "run"};
    profile_ = (dir_.path() / "samebits-logged.json").string();
    std::ofstream(profile_) << j.dump(2);
  }

  std::string Log() const { return (dir_.path() / "engine-calls.log").string(); }
  std::string Db() const { return (dir_.path() / "runs.db").string(); }

  // Returns the words after the command that make it run `checkpoints` on
  // the logging engine, for every command that takes --checkpoint.
  std::map<std::string, std::vector<std::string>> Ways(const std::string& checkpoints,
                                                       const std::string& one_checkpoint) {
    const std::vector<std::string> rest = {
        "--scenario",       Source("scenarios/classic.json"),     "--db", Db(),
        "--references-dir", (dir_.path() / "references").string()};
    auto with = [&](std::vector<std::string> words) {
      words.insert(words.end(), rest.begin(), rest.end());
      return words;
    };
    std::map<std::string, std::vector<std::string>> ways;
    for (const std::string& name : {"run", "gate", "reference generate", "bisect"}) {
      ways[name] = with({"--engine-profile", profile_, "--config", "reference,cpu-t1",
                         "--checkpoint", checkpoints, "-q"});
    }
    ways["run"].push_back("--dump-logits");
    ways["card"] = {"--engine-profile", profile_,     "--no-reference", "--checkpoint",
                    checkpoints,        "--scenario", "classic"};
    ways["conform"] = {"engine:" + profile_, "engine:" + profile_,
                       "--config-a",         "reference",
                       "--config-b",         "cpu-t1",
                       "--checkpoint",       checkpoints,
                       "--scenario",         "classic"};
    ways["bench"] = {"reference",    "cpu-t1",   "--engine", engine_, "--checkpoint",
                     one_checkpoint, "--rounds", "2",        "--db",  Db()};
    return ways;
  }

  // Runs every command that takes --checkpoint with `checkpoints` (commands
  // that take one: `one_checkpoint`); each must refuse `refused` before any
  // cell, saying `says`.
  void ExpectRefusedEverywhere(const std::string& checkpoints, const std::string& one_checkpoint,
                               const std::string& refused, const std::string& says) {
    const ProgramCommands program;
    std::map<std::string, std::vector<std::string>> ways = Ways(checkpoints, one_checkpoint);
    int checked = 0;
    for (const Command& command : program.all()) {
      if (!command.IsLeaf() || !command.Takes("checkpoint")) continue;
      const auto way = ways.find(command.Name());
      ASSERT_NE(way, ways.end()) << "samebits " << command.Name()
                                 << " takes --checkpoint: give it a way to run here";
      std::set<std::string> before = FilesIn(dir_.path());
      before.erase(Log());
      std::vector<std::string> argv = {BinDir() + "/samebits"};
      argv.insert(argv.end(), command.words.begin(), command.words.end());
      argv.insert(argv.end(), way->second.begin(), way->second.end());
      const CommandResult r = RunCommand(argv);
      ++checked;
      EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
      EXPECT_THAT(r.output, HasSubstr(refused)) << r.command << "\n" << r.output;
      EXPECT_THAT(r.output, HasSubstr(says)) << r.command << "\n" << r.output;
      EXPECT_THAT(CellsStarted(), ::testing::IsEmpty()) << r.command << "\n" << r.output;
      std::set<std::string> after = FilesIn(dir_.path());
      after.erase(Log());
      EXPECT_EQ(after, before) << "samebits " << command.Name() << " left files behind";
      EXPECT_FALSE(fs::exists(Db())) << "samebits " << command.Name() << " made a store";
    }
    EXPECT_GE(checked, 7);  // run, gate, reference generate, bisect, bench, card, conform
  }

  // Returns the logged engine calls that ran a cell (all but the probe).
  std::vector<std::string> CellsStarted() const {
    std::vector<std::string> cells;
    std::ifstream in(Log());
    for (std::string line; std::getline(in, line);) {
      if (line != "capabilities") cells.push_back(line);
    }
    return cells;
  }

  // Returns every path under `dir`, recursively.
  static std::set<std::string> FilesIn(const fs::path& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) out.insert(e.path().string());
    return out;
  }

  TempDir dir_;
  std::string engine_, profile_;
};

TEST_F(CliCheckpoints, EveryCommandRefusesASyntheticCheckpointTheEngineDoesNotKnowBeforeAnyCell) {
  // The engine is asked, and its list is in the message.
  ExpectRefusedEverywhere("synthetic:tiny,synthetic:nosuch", "synthetic:nosuch",
                          "'synthetic:nosuch'", "it knows synthetic:tiny");
  // It was asked (the probe is in its log), so the list is the engine's.
  std::ifstream in(Log());
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "capabilities");
}

TEST_F(CliCheckpoints, EveryCommandRefusesACheckpointFileThatIsNotThereBeforeAnyCell) {
  const std::string missing = (dir_.path() / "no-such-model.gguf").string();
  ExpectRefusedEverywhere("synthetic:tiny,gguf:" + missing, missing, missing, "no such file");
}

}  // namespace
}  // namespace samebits::cli
