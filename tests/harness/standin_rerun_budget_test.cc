// The gate's rerun budget, end to end with the real `samebits` and the
// stand-in engine's wrong-hash-at-3-threads fault over two scenarios, so
// that two pairs (reference and cpu-t3, once per scenario) diverge:
//   - with the default budget both pairs are rerun (both cpu-t3 cells get a
//     logit dump), not only the first;
//   - with a budget that runs out after the first pair, the other is named
//     in the diagnosis as not rerun, and its cells keep no dump.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/store.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

namespace fs = std::filesystem;

class StandinRerunBudget : public ::testing::Test {
 protected:
  StandinRerunBudget() : dir_("standin_rerun_budget") {}

  void SetUp() override {
    // Two scenario files (the stand-in only checks that they exist).
    scenarios_ = WriteScenario(dir_.path());
    const fs::path second = dir_.path() / "second.json";
    std::ofstream(second) << "{\"name\": \"second\"}\n";
    scenarios_ += "," + second.string();
    db_ = (dir_.path() / "db" / "runs.db").string();
    refs_ = (dir_.path() / "references").string();
    const CommandResult made = Samebits({"reference", "generate"}, "ok");
    ASSERT_EQ(made.exit_code, 0) << made.command << "\n" << made.output;
  }

  CommandResult Samebits(std::vector<std::string> words, const std::string& fault) {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    for (const std::string& a :
         {std::string("--engine"), FaultyEngine(dir_.path(), fault), std::string("--checkpoint"),
          std::string("synthetic:tiny"), std::string("--scenario"), scenarios_,
          std::string("--config"), std::string("reference,cpu-t3"), std::string("--timeout"),
          std::string("20"), std::string("-j"), std::string("2"), std::string("--db"), db_,
          std::string("--references-dir"), refs_}) {
      argv.push_back(a);
    }
    argv.push_back("-q");
    return RunCommand(argv);
  }

  harness::RunResult Latest() {
    store::Store store(db_);
    return store.LoadRun(store.LatestRunId());
  }

  // Returns how many cpu-t3 cells of the latest run have a logit dump.
  int DumpedCpuT3Cells() {
    int n = 0;
    for (const harness::CellResult& c : Latest().cells) {
      if (c.config.name == "cpu-t3" && !c.dump_path.empty()) ++n;
    }
    return n;
  }

  TempDir dir_;
  std::string scenarios_, db_, refs_;
};

bool SaysNotRerun(const harness::RunResult& run) {
  for (const std::string& d : run.diagnosis.details) {
    if (d.find("Not rerun within the rerun budget") != std::string::npos) return true;
  }
  return false;
}

TEST_F(StandinRerunBudget, EveryDivergingPairIsRerunWithinTheDefaultBudget) {
  const CommandResult r = Samebits({"gate"}, "wrong-hash-at-3-threads");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  ASSERT_EQ(run.diagnosis.divergences.size(), 2u);
  EXPECT_EQ(DumpedCpuT3Cells(), 2);
  EXPECT_FALSE(SaysNotRerun(run));
}

TEST_F(StandinRerunBudget, WhatTheBudgetLeftOutIsNamed) {
  // The budget is checked before each pair: the first always starts, and
  // takes longer than a microsecond, so the second is left out.
  const CommandResult r =
      Samebits({"gate", "--rerun-budget", "0.000001"}, "wrong-hash-at-3-threads");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Not rerun within the rerun budget of 1e-06 s (1 pairs were rerun"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 pairs: synthetic:tiny second: reference and cpu-t3"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(DumpedCpuT3Cells(), 1);
  EXPECT_TRUE(SaysNotRerun(Latest()));  // stored with the run, so reports show it
}

TEST_F(StandinRerunBudget, ABudgetOutOfRangeIsRefused) {
  for (const char* bad : {"0", "-1", "nan", "1e9", "soon"}) {
    const CommandResult r = Samebits({"gate", "--rerun-budget", bad}, "ok");
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("--rerun-budget"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace samebits::standin
