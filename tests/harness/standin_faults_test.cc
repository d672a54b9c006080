// The real `samebits` program driving the fault-injecting stand-in engine
// (tests/standins/standin_engine.cc): each way a child can fail must end in
// the right result code, diagnosis and exit code, and an engine whose
// 3-thread configuration changes one step must be caught as a broken
// identity naming cpu-t3 and that step.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/store.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

using harness::Diagnosis;
using harness::ResultCode;

// Three children per run keep these tests quick on two cores.

class StandinFaults : public ::testing::Test {
 protected:
  StandinFaults() : dir_("standin_faults") {}

  void SetUp() override {
    scenario_ = WriteScenario(dir_.path());
    db_ = (dir_.path() / "runs.db").string();
    refs_ = (dir_.path() / "references").string();
    // References made by the well-behaved stand-in, so a gate judges faults
    // against a reference rather than stopping at "no reference".
    const CommandResult made = Samebits({"reference", "generate"}, "ok");
    ASSERT_EQ(made.exit_code, 0) << made.command << "\n" << made.output;
  }

  // Returns the result of `samebits <words> --engine <stand-in with fault> ...`.
  CommandResult Samebits(std::vector<std::string> words, const std::string& fault,
                         const std::string& timeout = "20") {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    for (const std::string& a :
         {std::string("--engine"), FaultyEngine(dir_.path(), fault), std::string("--checkpoint"),
          std::string("synthetic:tiny"), std::string("--scenario"), scenario_,
          std::string("--config"), std::string(kReferenceAndTwoThreadCounts),
          std::string("--timeout"), timeout, std::string("-j"), std::string("2"),
          std::string("--db"), db_, std::string("--references-dir"), refs_}) {
      argv.push_back(a);
    }
    argv.push_back("-q");
    return RunCommand(argv);
  }

  harness::RunResult Latest() { return LatestRun(db_); }

  const harness::CellResult& Cell(const harness::RunResult& run, const std::string& config) {
    for (const harness::CellResult& c : run.cells) {
      if (c.config.name == config) return c;
    }
    ADD_FAILURE() << "no cell " << config;
    return run.cells.front();
  }

  TempDir dir_;
  std::string scenario_, db_, refs_;
};

TEST_F(StandinFaults, WellBehavedStandinPassesTheGate) {
  const CommandResult r = Samebits({"gate"}, "ok");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const harness::RunResult run = Latest();
  ASSERT_EQ(run.cells.size(), 3u);
  for (const auto& c : run.cells) EXPECT_EQ(c.code, ResultCode::kPass) << c.config.name;
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kAllAgree) << run.diagnosis.headline;
}

TEST_F(StandinFaults, CrashIsUnresolvedWithItsSignal) {
  const CommandResult r = Samebits({"gate"}, "crash");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  for (const auto& c : run.cells) {
    EXPECT_EQ(c.code, ResultCode::kUnresolved) << c.config.name;
    EXPECT_EQ(c.signal, 11) << c.config.name << ": " << c.message;
    EXPECT_EQ(c.steps.size(), 2u) << c.config.name;
    EXPECT_NE(c.stderr_tail.find("crashing at step 2"), std::string::npos) << c.stderr_tail;
  }
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kChildFailures) << run.diagnosis.headline;
}

TEST_F(StandinFaults, HangIsATimeout) {
  const CommandResult r = Samebits({"gate"}, "hang", "1.5");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  for (const auto& c : run.cells) EXPECT_EQ(c.code, ResultCode::kTimeout) << c.config.name;
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kChildFailures) << run.diagnosis.headline;
}

TEST_F(StandinFaults, GarbageOnStdoutIsUnresolved) {
  const CommandResult r = Samebits({"gate"}, "garbage");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  for (const auto& c : run.cells) {
    EXPECT_EQ(c.code, ResultCode::kUnresolved) << c.config.name;
    EXPECT_FALSE(c.message.empty());
  }
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kChildFailures) << run.diagnosis.headline;
}

TEST_F(StandinFaults, ExitWithoutDoneIsUnresolvedWhateverTheExitCode) {
  const CommandResult r = Samebits({"gate"}, "no-done");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  for (const auto& c : run.cells) {
    EXPECT_EQ(c.code, ResultCode::kUnresolved) << c.config.name;
    EXPECT_EQ(c.exit_code, 0);
    EXPECT_NE(c.message.find("done"), std::string::npos) << c.message;
  }
}

TEST_F(StandinFaults, ErrorRecordIsUnresolved) {
  const CommandResult r = Samebits({"gate"}, "error");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  for (const auto& c : run.cells) EXPECT_EQ(c.code, ResultCode::kUnresolved) << c.config.name;
}

// Returns the first divergence of the gate's JSON report (the in-memory run,
// as the gate judged it).
nlohmann::json FirstDivergence(const std::string& json_file) {
  std::ifstream in(json_file);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("diagnosis").at("kind"), "identity-broken");
  const auto& divergences = j.at("diagnosis").at("divergences");
  if (divergences.empty()) {
    ADD_FAILURE() << "no divergence in " << json_file;
    return nlohmann::json::object();
  }
  return divergences[0];
}

TEST_F(StandinFaults, WrongHashAtThreeThreadsIsABrokenIdentityNamingCpuT3AndStep3) {
  const std::string json = (dir_.path() / "gate.json").string();
  const CommandResult r = Samebits({"gate", "--report-json", json}, "wrong-hash-at-3-threads");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("reference and cpu-t3 first differ at step 3"), std::string::npos)
      << r.output;
  const harness::RunResult run = Latest();
  EXPECT_EQ(Cell(run, "reference").code, ResultCode::kPass);
  EXPECT_EQ(Cell(run, "cpu-t1").code, ResultCode::kPass);
  EXPECT_EQ(Cell(run, "cpu-t3").code, ResultCode::kFail);
  EXPECT_NE(Cell(run, "cpu-t3").message.find("step 3"), std::string::npos);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kIdentityBroken) << run.diagnosis.headline;
  const auto d = FirstDivergence(json);
  EXPECT_EQ(d.value("config_b", ""), "cpu-t3") << d.dump();
  EXPECT_EQ(d.value("step_index", -1), 3) << d.dump();

  // The stored run's reports say the same.
  const CommandResult stored =
      RunCommand({BinDir() + "/samebits", "report", "latest", "--format", "json", "--db", db_});
  ASSERT_EQ(stored.exit_code, 0) << stored.output;
  const auto j = nlohmann::json::parse(stored.output);
  EXPECT_EQ(j.at("diagnosis").at("kind"), "identity-broken");
  EXPECT_EQ(j.at("counts").at("FAIL"), 1);
  const CommandResult md = RunCommand({BinDir() + "/samebits", "report", "latest", "--db", db_});
  EXPECT_NE(md.output.find("| cpu-t3 | FAIL | step 3 (decode"), std::string::npos) << md.output;
  const std::string html = (dir_.path() / "report.html").string();
  EXPECT_EQ(
      RunCommand({BinDir() + "/samebits", "report", "latest", "-o", html, "--db", db_}).exit_code,
      0);
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("class=\"differs first\" title=\"cpu-t3, step 3"), std::string::npos);
}

TEST_F(StandinFaults, GateWithTraceNamesTheDivergingLayerAndOp) {
  const std::string json = (dir_.path() / "gate.json").string();
  const CommandResult r =
      Samebits({"gate", "--trace", "--report-json", json}, "wrong-hash-at-3-threads");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("layer 1, op ffn_down"), std::string::npos) << r.output;
  // The stand-in perturbs layer 1's ffn_down trace at step 3's position.
  const auto d = FirstDivergence(json);
  EXPECT_EQ(d.value("step_index", -1), 3) << d.dump();
  EXPECT_EQ(d.value("layer", nlohmann::json()), 1) << d.dump();
  EXPECT_EQ(d.value("op", ""), "ffn_down") << d.dump();
}

TEST_F(StandinFaults, DiffBetweenAGoodAndABadRunNamesTheCellAndStep) {
  ASSERT_EQ(Samebits({"run"}, "ok").exit_code, 0);
  const int64_t good = [&] {
    store::Store s(db_);
    return s.LatestRunId();
  }();
  Samebits({"run"}, "wrong-hash-at-3-threads");
  const int64_t bad = [&] {
    store::Store s(db_);
    return s.LatestRunId();
  }();
  ASSERT_NE(good, bad);
  const CommandResult same = RunCommand(
      {BinDir() + "/samebits", "diff", std::to_string(good), std::to_string(good), "--db", db_});
  EXPECT_EQ(same.exit_code, 0) << same.output;
  const CommandResult d = RunCommand(
      {BinDir() + "/samebits", "diff", std::to_string(good), std::to_string(bad), "--db", db_});
  EXPECT_EQ(d.exit_code, 1) << d.output;
  EXPECT_NE(d.output.find("2 cells identical, 1 differ"), std::string::npos) << d.output;
  EXPECT_NE(d.output.find("| cpu-t3 | PASS (8 steps) |"), std::string::npos) << d.output;
  EXPECT_NE(d.output.find("| 1 | step 3 (decode, position 8): xxh3 "), std::string::npos)
      << d.output;
}

TEST_F(StandinFaults, ReportRejectsAnUnknownFormatWithExit2) {
  const CommandResult r =
      RunCommand({BinDir() + "/samebits", "report", "latest", "--format", "pdf", "--db", db_});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown report format 'pdf'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace samebits::standin
