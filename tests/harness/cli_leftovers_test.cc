// Class 4 of issue 43: a run that is not stored leaves nothing behind. Every
// command that keeps raw logit dumps (those that take --dump-logits, from
// the CLI's own list) is run on a selection whose second checkpoint the
// engine refuses, so the run is made, its first cells dump, and the store
// never takes it; the dumps folder beside the store must hold no file after.
// The engine is given by path (`--engine PROGRAM`), which declares no probe,
// so the harness cannot refuse the checkpoint before the cells run
// (cli_checkpoints_test.cc holds that rule where the engine says what it
// knows) and the run is made and then refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
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

// Returns the regular files under `dir`, recursively.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file()) out.push_back(e.path().string());
  }
  return out;
}

TEST(Leftovers, AnUnstoredRunLeavesNoDumpOnEveryCommandThatDumps) {
  const ProgramCommands program;
  int checked = 0;
  for (const Command& command : program.all()) {
    if (!command.IsLeaf() || !command.Takes("dump-logits")) continue;
    TempDir dir("leftovers");
    fs::create_directories(dir.path() / "references");
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), command.words.begin(), command.words.end());
    for (const std::string& a :
         {std::string("--engine"), BinDir() + "/samebits-engine", std::string("--checkpoint"),
          std::string("synthetic:tiny,synthetic:nosuch"), std::string("--scenario"),
          Source("scenarios/classic.json"), std::string("--config"), std::string("reference"),
          std::string("--dump-logits"), std::string("--db"), (dir.path() / "runs.db").string(),
          std::string("--references-dir"), (dir.path() / "references").string(),
          std::string("-q")}) {
      argv.push_back(a);
    }
    const CommandResult r = RunCommand(argv);
    ++checked;
    EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
    EXPECT_THAT(r.output, ::testing::HasSubstr("nosuch")) << r.command << "\n" << r.output;
    EXPECT_THAT(FilesUnder(dir.path() / "dumps"), ::testing::IsEmpty())
        << "samebits " << command.Name() << " left dumps of a run it did not store";
  }
  EXPECT_GE(checked, 2);
}

}  // namespace
}  // namespace samebits::cli
