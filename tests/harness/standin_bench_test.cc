// `samebits bench A B` with stand-in engines (tests/standins): two programs
// that print the same bits bench as identical; a B that changes one step's
// hash at three threads is flagged, whatever its speed; the bench is stored
// and its HTML report holds the table and the SVG plot. The machine is
// shared while tests run, so these pass --force (the preflight's refusal is
// tested on injected readings in preflight_test.cc).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "harness/store/bench_records.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

namespace fs = std::filesystem;

class StandinBench : public ::testing::Test {
 protected:
  TempDir tmp_{"bench"};
  std::string scenario_ = WriteScenario(tmp_.path());
  std::string db_ = (tmp_.path() / "bench.db").string();

  CommandResult Bench(const std::string& a, const std::string& b,
                      const std::vector<std::string>& more = {}) {
    std::vector<std::string> argv = {BinDir() + "/samebits",
                                     "bench",
                                     a,
                                     b,
                                     "--checkpoint",
                                     "synthetic:tiny",
                                     "--scenario",
                                     scenario_,
                                     "--config",
                                     "cpu-t3",
                                     "--rounds",
                                     "2",
                                     "--force",
                                     "-q",
                                     "--db",
                                     db_};
    argv.insert(argv.end(), more.begin(), more.end());
    return RunCommand(argv);
  }
};

TEST_F(StandinBench, TwoEnginesThatAgreeAreIdenticalAndStored) {
  const std::string a = FaultyEngine(tmp_.path(), "ok");
  const std::string html = (tmp_.path() / "bench.html").string();
  const CommandResult r = Bench(a, BinDir() + "/samebits-standin-engine", {"--report-html", html});
  ASSERT_EQ(r.exit_code, 0) << r.command << "\n" << r.output;
  EXPECT_NE(r.output.find("identity: every run of A and B printed the same outputs"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("B/A time: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("95% CI"), std::string::npos) << r.output;
  store::Store store(db_);
  // One warm-up of each side, then two rounds of A B B A.
  const std::vector<harness::BenchSample> samples = store::LoadBenchSamples(store, 1);
  ASSERT_EQ(samples.size(), 10u);
  std::string order;
  for (const harness::BenchSample& s : samples) {
    order += s.side;
    EXPECT_TRUE(s.ok) << s.failure;
    EXPECT_GT(s.elapsed_ms, 0);
  }
  EXPECT_EQ(order, "ABABBAABBA");
  EXPECT_EQ(samples[0].round, -1);
  std::ifstream in(html);
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("<svg"), std::string::npos);
  EXPECT_NE(page.str().find("<table>"), std::string::npos);
  // The stand-in's `done` has no prefill/decode split: said, not guessed.
  EXPECT_NE(r.output.find("prefill: split unknown"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("decode: split unknown"), std::string::npos) << r.output;
  EXPECT_EQ(page.str().find("prefill (per token)"), std::string::npos);
}

// The real engine reports the split in `done`: the table gives each phase
// per token with its ratio, and the plot gets a panel per phase. (Only the
// presence is checked; the machine is shared, so no speed is asserted.)
TEST_F(StandinBench, TheRealEnginesPhasesAreReportedAndPlotted) {
  const std::string html = (tmp_.path() / "bench.html").string();
  const CommandResult r = RunCommand(
      {BinDir() + "/samebits", "bench", "cpu-t1", "cpu-t2", "--checkpoint", "synthetic:tiny",
       "--scenario", std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/chunk-extend-6.json",
       "--rounds", "2", "--force", "-q", "--db", db_, "--report-html", html});
  ASSERT_EQ(r.exit_code, 0) << r.command << "\n" << r.output;
  EXPECT_NE(r.output.find("prefill (12 tokens per run): A "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("decode (4 tokens per run): A "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ms/token"), std::string::npos) << r.output;
  std::ifstream in(html);
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("prefill (per token)"), std::string::npos);
  EXPECT_NE(page.str().find("decode (per token)"), std::string::npos);
}

TEST_F(StandinBench, ABThatChangesABitIsFlagged) {
  const std::string a = BinDir() + "/samebits-standin-engine";
  const std::string b = FaultyEngine(tmp_.path(), "wrong-hash-at-3-threads");
  const CommandResult r = Bench(a, b);
  EXPECT_EQ(r.exit_code, 1) << r.command << "\n" << r.output;
  EXPECT_NE(r.output.find("identity: DIFFERS: B changes the bits: its outputs first differ from "
                          "A's at step 3"),
            std::string::npos)
      << r.output;
  store::Store store(db_);
  store::Statement row =
      store.connection().Prepare("SELECT identical, identity_detail FROM benches WHERE id = 1");
  ASSERT_TRUE(row.Step());
  EXPECT_EQ(row.Int(0), 0);
  EXPECT_NE(row.Text(1).find("step 3"), std::string::npos);
}

// The same fault at another thread count changes nothing: the flag comes
// from the outputs, not from the program's name.
TEST_F(StandinBench, TheFaultyEngineAtTwoThreadsIsIdentical) {
  const std::string a = BinDir() + "/samebits-standin-engine";
  const std::string b = FaultyEngine(tmp_.path(), "wrong-hash-at-3-threads");
  std::vector<std::string> argv = {BinDir() + "/samebits",
                                   "bench",
                                   a,
                                   b,
                                   "--checkpoint",
                                   "synthetic:tiny",
                                   "--scenario",
                                   scenario_,
                                   "--config",
                                   "cpu-t2",
                                   "--rounds",
                                   "2",
                                   "--force",
                                   "-q",
                                   "--db",
                                   db_};
  const CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(StandinBench, NamesThatAreNoEngineConfigurationOrRevisionAreRefused) {
  const CommandResult r = Bench("no-such-thing-anywhere", "cpu-t1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("neither an engine program, a configuration"), std::string::npos)
      << r.output;
}

// An engine that hangs, after starting processes of its own (one in a
// session of its own, as a daemon would), is killed at the deadline with
// everything it started: nothing is left running, reparented to PID 1.
TEST_F(StandinBench, AHangingEngineIsKilledWithEverythingItStartedAtTheDeadline) {
  const fs::path pids = tmp_.path() / "pids";
  const fs::path engine = tmp_.path() / "hanging-engine.sh";
  {
    std::ofstream script(engine);
    script << "#!/bin/sh\n"
           << "setsid sleep 300 </dev/null >/dev/null 2>&1 &\n"
           << "echo $! >> '" << pids.string() << "'\n"
           << "sleep 300 </dev/null >/dev/null 2>&1 &\n"
           << "echo $! >> '" << pids.string() << "'\n"
           << "exec sleep 300\n";
  }
  fs::permissions(engine, fs::perms::owner_all);
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = RunCommand(
      {BinDir() + "/samebits", "bench", engine.string(), engine.string(), "--scenario", scenario_,
       "--rounds", "2", "--warmup", "0", "--timeout", "1", "--force", "-q", "--db", db_});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_LT(seconds, 90) << "eight runs of a 1 s timeout";
  std::ifstream in(pids);
  std::vector<pid_t> started;
  for (pid_t pid; in >> pid;) started.push_back(pid);
  ASSERT_EQ(started.size(), 16u) << "two processes started by each of the eight runs";
  for (const pid_t pid : started) {
    const bool alive = ::kill(pid, 0) == 0;
    EXPECT_FALSE(alive) << "process " << pid << " outlived its engine's deadline";
    if (alive) ::kill(pid, SIGKILL);
  }
}

// An engine that refuses the command line (here: a checkpoint file it
// cannot read as one) stops the bench with exit 2 before any round, and
// nothing is stored; so does an engine that says it cannot run the
// configuration here. A checkpoint file that does not exist is refused by
// the harness before the engine is started (cli_checkpoints_test.cc).
TEST_F(StandinBench, AnEngineThatRefusesTheRunStopsTheBenchBeforeAnyRound) {
  const std::string garbage = (tmp_.path() / "garbage.gguf").string();
  std::ofstream(garbage) << "not a checkpoint";
  const std::string missing = (tmp_.path() / "missing.gguf").string();
  for (const auto& [checkpoint, says] :
       {std::pair{"gguf:" + garbage, std::string("refused to run")},
        std::pair{garbage, std::string("refused to run")},
        std::pair{std::string("gguf:/no/such/model.gguf"),
                  std::string("no such file or folder /no/such")},
        std::pair{missing, "no such file or folder " + missing}}) {
    const CommandResult r =
        RunCommand({BinDir() + "/samebits", "bench", "cpu-t1", "cpu-t2", "--checkpoint", checkpoint,
                    "--rounds", "3", "--force", "--db", db_});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("round 0"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("stored as bench"), std::string::npos) << r.output;
  }
}

// A side whose ISA the engine says it lacks here (its capabilities probe)
// is refused with the engine's reason before anything is built or timed.
TEST_F(StandinBench, ASideTheEngineCannotRunHereIsRefusedWithItsReason) {
  const CommandResult probe = RunCommand({BinDir() + "/samebits-engine", "capabilities"});
  ASSERT_EQ(probe.exit_code, 0) << probe.output;
  const std::string key = R"("value":")";
  const size_t at = probe.output.find(key);
  if (at == std::string::npos) GTEST_SKIP() << "this machine runs every ISA: " << probe.output;
  const size_t from = at + key.size();
  const std::string isa = probe.output.substr(from, probe.output.find('"', from) - from);
  const CommandResult r = RunCommand({BinDir() + "/samebits", "bench", "cpu-t1", "cpu-" + isa,
                                      "--rounds", "3", "--force", "--db", db_});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("this machine cannot run cpu-" + isa + ": "), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("round 0"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace samebits::standin
