// Fault injection through the real `samebits` program for the hardening
// cases: an engine that leaves a process holding its pipes, reports written
// over the store, foreign and read-only stores, and `diff` on incomplete
// runs. Each test drives the stand-in engine (tests/standins) or a shell
// script wrapped around it.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>

#include "harness/analysis/results.h"
#include "harness/store/store.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

using harness::ResultCode;
namespace fs = std::filesystem;

class StandinHardening : public ::testing::Test {
 protected:
  StandinHardening() : dir_("standin_hardening") {}

  void SetUp() override {
    scenario_ = WriteScenario(dir_.path());
    db_ = (dir_.path() / "runs.db").string();
  }

  // Returns a shell script under the test folder that runs `prologue`, then
  // execs the well-behaved stand-in with the script's arguments.
  std::string WrappedEngine(const std::string& name, const std::string& prologue) {
    const fs::path script = dir_.path() / name;
    std::ofstream(script) << "#!/bin/sh\n"
                          << prologue << "\nexec " << ShellQuote(FaultyEngine(dir_.path(), "ok"))
                          << " \"$@\"\n";
    fs::permissions(script, fs::perms::owner_all);
    return script.string();
  }

  // Returns the result of `samebits <words> --engine <engine> ...` over one
  // stand-in cell.
  CommandResult Samebits(std::vector<std::string> words, const std::string& engine,
                         const std::string& timeout = "20",
                         const std::string& configs = "reference") {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    for (const std::string& a : {std::string("--engine"), engine, std::string("--checkpoint"),
                                 std::string("synthetic:tiny"), std::string("--scenario"),
                                 scenario_, std::string("--config"), configs,
                                 std::string("--timeout"), timeout, std::string("--db"), db_,
                                 std::string("--references-dir"),
                                 (dir_.path() / "references").string()}) {
      argv.push_back(a);
    }
    argv.push_back("-q");
    return RunCommand(argv);
  }

  harness::RunResult Latest() {
    store::Store store(db_);
    return store.LoadRun(store.LatestRunId());
  }

  TempDir dir_;
  std::string scenario_, db_;
};

// Returns the ids in "(pid N)" mentions of `message`.
std::vector<pid_t> MentionedPids(const std::string& message) {
  std::vector<pid_t> out;
  const std::regex pid_re("\\(pid ([0-9]+)\\)");
  for (std::sregex_iterator it(message.begin(), message.end(), pid_re), end; it != end; ++it) {
    out.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  }
  return out;
}

// An engine that leaves a process in a new session holding its stdout and
// stderr once kept `run` and `gate` waiting forever. Now the cell ends when
// the engine does, the process is killed, and the result names it.
TEST_F(StandinHardening, AProcessLeftInANewSessionIsKilledAndNamed) {
  const std::string engine = WrappedEngine("leaves-sleep.sh", "setsid sleep 999 &");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = Samebits({"run"}, engine, "5");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << r.output;  // the cell ended with the engine, not at the deadline
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  ASSERT_EQ(run.cells.size(), 1u);
  const harness::CellResult& cell = run.cells[0];
  EXPECT_EQ(cell.code, ResultCode::kUnresolved) << cell.message;
  EXPECT_NE(cell.message.find("left running after it ended (killed): sleep (pid "),
            std::string::npos)
      << cell.message;
  const std::vector<pid_t> pids = MentionedPids(cell.message);
  ASSERT_EQ(pids.size(), 1u) << cell.message;
  EXPECT_NE(::kill(pids[0], 0), 0) << "pid " << pids[0] << " still runs";
}

// The same process behind an engine that itself hangs: the gate ends at the
// deadline (plus the grace), with a TIMEOUT naming the process.
TEST_F(StandinHardening, AHangingEngineWithALeftoverEndsAtTheDeadline) {
  const std::string engine = WrappedEngine(
      "hangs.sh", "setsid sleep 999 &\nexec " + ShellQuote(FaultyEngine(dir_.path(), "hang")) +
                      " \"$@\"");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = Samebits({"gate"}, engine, "2");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  ASSERT_EQ(run.cells.size(), 1u);
  EXPECT_EQ(run.cells[0].code, ResultCode::kTimeout) << run.cells[0].message;
  EXPECT_NE(run.cells[0].message.find("sleep (pid "), std::string::npos) << run.cells[0].message;
  for (pid_t pid : MentionedPids(run.cells[0].message)) EXPECT_NE(::kill(pid, 0), 0) << pid;
}

// Negative control: the same wrapper without a leftover passes.
TEST_F(StandinHardening, AWrapperThatLeavesNothingPasses) {
  const std::string engine = WrappedEngine("clean.sh", "true");
  const CommandResult r = Samebits({"run"}, engine);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Latest().cells.at(0).code, ResultCode::kPass) << Latest().cells.at(0).message;
}


}  // namespace
}  // namespace samebits::standin
