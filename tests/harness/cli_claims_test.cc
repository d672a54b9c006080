// Class 1 of issue 43: a live engine is trusted no more than a bundle. Every
// claim a child makes that the harness can check (its steps against its
// scenario, its raw logit dump against its steps and its hello's
// vocabulary) is checked in one place (harness/runner/engine_claims.h).
// This test holds that rule over every command that runs engine cells,
// found in the program's own command list, and over both ways an engine is
// driven: as samebits-engine is (`--engine PROGRAM`) and through a profile
// (`--engine-profile FILE`, `engine:FILE`). A command that runs engines and
// is added later fails here until it is given a way to run one cell.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/harness/program_commands.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;
using standin::BinDir;
using standin::CommandResult;
using standin::FaultyEngine;
using standin::RunCommand;
using standin::Source;
using standin::TempDir;
using ::testing::HasSubstr;

// Runs `samebits COMMAND WORDS...`.
CommandResult RunWith(const Command& command, const std::vector<std::string>& words) {
  std::vector<std::string> argv = {BinDir() + "/samebits"};
  argv.insert(argv.end(), command.words.begin(), command.words.end());
  argv.insert(argv.end(), words.begin(), words.end());
  return RunCommand(argv);
}

// The stand-in's lies (tests/standins/standin_engine.cc) and whether the
// harness needs the dump to catch them.
struct Lie {
  std::string fault;
  bool needs_dump;
};
const std::vector<Lie> kLies = {
    {"dump-differs", true}, {"dump-short", true}, {"dump-extra", true},
    {"hello-vocab", true},  {"no-steps", false},  {"half-steps", false},
};

// How one command runs one stand-in cell: its words after the command, for
// an engine given as a program (`program`) or a profile file (`profile`);
// whether it asks for dumps. `skip` says why a command that runs engines
// is not run here.
struct Way {
  std::vector<std::string> with_program, with_profile;
  bool dumps = false;
  std::string skip;
};

class CliClaims : public ::testing::Test {
 protected:
  CliClaims() : dir_("cli_claims") { fs::create_directories(dir_.path() / "references"); }

  // Returns the stand-in's profile with its command the stand-in under `fault`.
  std::string Profile(const std::string& fault) {
    std::ifstream in(Source("tests/standins/standin_profile.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["command"] = {FaultyEngine(dir_.path(), fault), "run"};
    std::string path = (dir_.path() / ("standin-" + fault + ".json")).string();
    std::ofstream(path) << j.dump(2);
    return path;
  }

  // Returns the ways of every command that runs engine cells.
  std::map<std::string, Way> Ways(const std::string& fault) {
    const std::string program = FaultyEngine(dir_.path(), fault);
    const std::string profile = Profile(fault);
    const std::string db = (dir_.path() / (fault + ".db")).string();
    const std::vector<std::string> cell = {"--checkpoint", "synthetic:tiny",
                                           "--scenario",   Source("scenarios/classic.json"),
                                           "--timeout",    "20"};
    const std::vector<std::string> store = {"--db", db, "--references-dir",
                                            (dir_.path() / "references").string()};
    auto join = [](const std::vector<std::vector<std::string>>& parts) {
      std::vector<std::string> out;
      for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
      return out;
    };
    std::map<std::string, Way> ways;
    for (const std::string& name : {"run", "gate"}) {
      ways[name] = {
          join({{"--engine", program, "--config", "cpu-t1", "--dump-logits"}, cell, store}),
          join({{"--engine-profile", profile, "--config", "cpu-t1", "--dump-logits"}, cell, store}),
          true};
    }
    ways["reference generate"] = {
        join({{"--engine", program, "--config", "cpu-t1"}, cell, store}),
        join({{"--engine-profile", profile, "--config", "cpu-t1"}, cell, store}), false};
    ways["card"] = {{}, join({{"--engine-profile", profile, "--no-reference"}, cell}), true};
    ways["conform"] = {{},
                       join({{"engine:" + profile, "engine:" + profile, "--config-a", "cpu-t1",
                              "--config-b", "cpu-t2"},
                             cell}),
                       true};
    ways["bisect"].skip =
        "builds and runs each revision's own samebits-engine from git; its cells are judged by "
        "the same JudgeChild as run's";
    return ways;
  }

  TempDir dir_;
};

// Every command that can drive an engine: it takes --engine or
// --engine-profile, or engine:NAME operands (conform's --config-a).
std::vector<Command> EngineCommands(const ProgramCommands& program) {
  std::vector<Command> out;
  for (const Command& c : program.all()) {
    if (!c.IsLeaf()) continue;
    if (c.Name() == "bench") continue;  // A/B timing of two builds: judged by JudgeChild, no dumps
    if (c.Takes("engine") || c.Takes("engine-profile") || c.Takes("config-a")) out.push_back(c);
  }
  return out;
}

TEST_F(CliClaims, EveryCommandAndEngineRefusesAnEngineWhoseClaimsDoNotCheck) {
  const ProgramCommands program;
  const std::vector<Command> commands = EngineCommands(program);
  ASSERT_GE(commands.size(), 5u);
  int runs = 0;
  for (const Lie& lie : kLies) {
    std::map<std::string, Way> ways = Ways(lie.fault);
    for (const Command& command : commands) {
      const auto it = ways.find(command.Name());
      ASSERT_NE(it, ways.end()) << "samebits " << command.Name()
                                << " runs engines: give it a way to run one cell here";
      const Way& way = it->second;
      if (!way.skip.empty()) continue;
      if (lie.needs_dump && !way.dumps) continue;
      for (const std::vector<std::string>* words : {&way.with_program, &way.with_profile}) {
        if (words->empty()) continue;
        const CommandResult r = RunWith(command, *words);
        ++runs;
        EXPECT_NE(r.exit_code, 0) << lie.fault << ": " << r.command << "\n" << r.output;
        EXPECT_THAT(r.output, HasSubstr("does not check")) << lie.fault << ": " << r.command << "\n"
                                                           << r.output;
      }
    }
  }
  EXPECT_GE(runs, 30);
}

// The well-behaved stand-in passes every one of those checks, so the test
// above fails for the lies and nothing else.
TEST_F(CliClaims, AnHonestEngineChecksOnEveryCommand) {
  const ProgramCommands program;
  std::map<std::string, Way> ways = Ways("ok");
  for (const Command& command : EngineCommands(program)) {
    const Way& way = ways[command.Name()];
    if (!way.skip.empty()) continue;
    for (const std::vector<std::string>* words : {&way.with_program, &way.with_profile}) {
      if (words->empty()) continue;
      const CommandResult r = RunWith(command, *words);
      // (gate exits 1 for want of references, which this folder has none of)
      EXPECT_NE(r.exit_code, 2) << r.command << "\n" << r.output;
      EXPECT_THAT(r.output, ::testing::Not(HasSubstr("UNRESOLVED"))) << r.command << "\n"
                                                                     << r.output;
    }
  }
}

}  // namespace
}  // namespace samebits::cli
