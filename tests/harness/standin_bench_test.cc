// `samebits bench A B` with stand-in engines (tests/standins): two programs
// that print the same bits bench as identical; a B that changes one step's
// hash at three threads is flagged, whatever its speed; the bench is stored
// and its HTML report holds the table and the SVG plot. The machine is
// shared while tests run, so these pass --force (the preflight's refusal is
// tested on injected readings in preflight_test.cc).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness/store/bench_records.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

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

}  // namespace
}  // namespace samebits::standin
