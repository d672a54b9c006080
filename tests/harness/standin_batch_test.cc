// Batched configurations end to end, with the real `samebits` and the
// stand-in engine (tests/standins/standin_engine.cc), which echoes the batch
// flags and gives every step a place: the flags reach the engine and the
// places the store; an engine that ran alone fails its batched cells; a
// batch-variant engine is diagnosed as such, and every report, `compare`
// and `diff` name the batch, the schedule and the slot of the first
// difference; bundles carry it all.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/exchange/bundle.h"
#include "harness/runner/cell_runner.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"
#include "tests/harness/standin_helpers.h"
#include "tests/harness/standin_matrix.h"

namespace samebits::standin {
namespace {

using harness::CellResult;
using harness::Diagnosis;
using harness::ResultCode;
using harness::RunResult;

constexpr const char* kBatchedConfigs = "cpu-t1,cpu-t2,cpu-t2-b4,cpu-t3-b8-staggered";

const CellResult& CellNamed(const RunResult& run, const std::string& config) {
  for (const CellResult& c : run.cells) {
    if (c.config.name == config) return c;
  }
  ADD_FAILURE() << "no cell " << config;
  return run.cells.front();
}

class StandinBatch : public ::testing::Test {
 protected:
  StandinBatch() : m_("standin_batch") {}

  void SetUp() override {
    // The references come from unbatched configurations only: batched cells
    // are judged against batch 1's bits.
    const CommandResult made = Run({"reference", "generate"}, "ok", "cpu-t1,cpu-t2", "ref.db");
    ASSERT_EQ(made.exit_code, 0) << made.command << "\n" << made.output;
  }

  // Returns `samebits <words>` over one checkpoint and scenario with the
  // stand-in under `fault`, the configurations `configs`, storing in `db`.
  CommandResult Run(std::vector<std::string> words, const std::string& fault,
                    const std::string& configs, const std::string& db) {
    const std::vector<std::string> matrix = {"--engine",
                                             FaultyEngine(dir(), fault),
                                             "--checkpoint",
                                             "synthetic:tiny",
                                             "--scenario",
                                             Scenario(),
                                             "--config",
                                             configs,
                                             "--timeout",
                                             "20",
                                             "-j",
                                             "2",
                                             "--db",
                                             m_.Path(db),
                                             "--references-dir",
                                             m_.Path("references"),
                                             "-q"};
    words.insert(words.end(), matrix.begin(), matrix.end());
    return m_.Samebits(words);
  }

  std::filesystem::path dir() const { return std::filesystem::path(m_.Path("")); }

  std::string Scenario() {
    if (scenario_.empty()) scenario_ = WriteScenario(dir());
    return scenario_;
  }

  StandinMatrix m_;
  std::string scenario_;
};

// The stand-in echoes the flags it was given: a batched cell passes only
// when the hello says the batch asked for, and its places are stored.
TEST_F(StandinBatch, BatchedCellsPassAndKeepTheirPlaces) {
  const CommandResult gate = Run({"gate"}, "ok", kBatchedConfigs, "ok.db");
  ASSERT_EQ(gate.exit_code, 0) << gate.command << "\n" << gate.output;
  const RunResult run = m_.Latest("ok.db");
  const CellResult& alone = CellNamed(run, "cpu-t1");
  EXPECT_EQ(alone.config.batch, 1);
  for (const harness::StepRecord& s : alone.steps) EXPECT_FALSE(s.batch) << s.index;

  const CellResult& together = CellNamed(run, "cpu-t2-b4");
  EXPECT_EQ(together.code, ResultCode::kPass) << together.message;
  EXPECT_EQ(together.config.batch, 4);
  EXPECT_EQ(together.config.batch_seed, 1u);
  EXPECT_EQ(together.config.batch_schedule, "together");
  ASSERT_FALSE(together.steps.empty());
  for (const harness::StepRecord& s : together.steps) {
    ASSERT_TRUE(s.batch) << s.index;
    EXPECT_EQ(s.batch->sequences, 4);
  }

  const CellResult& staggered = CellNamed(run, "cpu-t3-b8-staggered");
  EXPECT_EQ(staggered.code, ResultCode::kPass) << staggered.message;
  EXPECT_EQ(staggered.config.threads, 3);
  EXPECT_EQ(staggered.config.batch, 8);
  EXPECT_EQ(staggered.config.batch_schedule, "staggered");
  bool moved = false;
  for (const harness::StepRecord& s : staggered.steps) {
    ASSERT_TRUE(s.batch) << s.index;
    EXPECT_LT(s.batch->slot, s.batch->sequences);
    EXPECT_LT(s.batch->row, s.batch->rows);
    moved = moved || s.batch->slot != staggered.steps.front().batch->slot;
  }
  EXPECT_TRUE(moved) << "a staggered sequence changes slots";
}

// An engine that ignored --batch ran the sequence alone: its hashes equal
// batch 1's, so only its hello tells; the batched cells must not pass.
TEST_F(StandinBatch, AnEngineThatRanAloneFailsTheBatchedCells) {
  const CommandResult gate = Run({"gate"}, "ignore-batch", kBatchedConfigs, "alone.db");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  const RunResult run = m_.Latest("alone.db");
  for (const char* name : {"cpu-t2-b4", "cpu-t3-b8-staggered"}) {
    const CellResult& c = CellNamed(run, name);
    EXPECT_EQ(c.code, ResultCode::kUnresolved) << name;
    EXPECT_NE(c.message.find("the engine did not run batched: its hello reports batch 1"),
              std::string::npos)
        << c.message;
  }
  // Negative control: its unbatched cells are fine.
  EXPECT_EQ(CellNamed(run, "cpu-t1").code, ResultCode::kPass);
  EXPECT_EQ(CellNamed(run, "cpu-t2").code, ResultCode::kPass);
  EXPECT_NE(gate.output.find("did not run batched"), std::string::npos) << gate.output;
}

// A batch-variant kernel: the unbatched configurations agree, the batched
// ones differ at step 3. The diagnosis says so and every report names the
// batch and where the sequence sat.
TEST_F(StandinBatch, ABatchVariantEngineIsDiagnosedWithItsPlace) {
  const std::string md = m_.Path("r.md"), json = m_.Path("r.json"), junit = m_.Path("r.xml"),
                    html = m_.Path("r.html");
  const CommandResult gate = Run({"gate", "--report-md", md, "--report-json", json,
                                  "--report-junit", junit, "--report-html", html},
                                 "batch-variant", kBatchedConfigs, "variant.db");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  const RunResult run = m_.Latest("variant.db");
  const std::string text = DiagnosisText(run.diagnosis);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kBatchVariance) << text;
  EXPECT_NE(text.find("not batch-invariant: rows of other sequences change this sequence's"),
            std::string::npos)
      << text;
  EXPECT_EQ(CellNamed(run, "cpu-t1").code, ResultCode::kPass);
  EXPECT_EQ(CellNamed(run, "cpu-t2-b4").code, ResultCode::kFail);
  const std::string together =
      "step 3 (decode, position 8) \u2014 batch 4 together, slot 0 of 4 "
      "sequences, row 0 of 4";
  EXPECT_NE(CellNamed(run, "cpu-t2-b4").message.find(together), std::string::npos)
      << CellNamed(run, "cpu-t2-b4").message;
  // Where the staggered sequence sat at step 3 is what the stand-in said.
  const harness::BatchPlace at3 = *CellNamed(run, "cpu-t3-b8-staggered").steps[3].batch;
  const std::string staggered = "batch 8 staggered, slot " + std::to_string(at3.slot) + " of " +
                                std::to_string(at3.sequences) + " sequences, row " +
                                std::to_string(at3.row) + " of " + std::to_string(at3.rows);
  EXPECT_NE(text.find(staggered), std::string::npos) << text;
  bool stored = false;
  for (const harness::Divergence& d : run.diagnosis.divergences) {
    stored = stored || d.batch_place == staggered;
  }
  EXPECT_TRUE(stored) << "the divergence keeps its batch place in the store";
  EXPECT_NE(gate.output.find(together), std::string::npos) << gate.output;
  for (const std::string& report : {md, json, junit, html}) {
    const std::string body = harness::testing::ReadFile(report);
    EXPECT_NE(body.find("batch 8 staggered, slot"), std::string::npos) << report << "\n" << body;
  }
  EXPECT_NE(harness::testing::ReadFile(json).find("\"batch-variance\""), std::string::npos);
  EXPECT_NE(harness::testing::ReadFile(json).find("\"batch_schedule\": \"staggered\""),
            std::string::npos);
}

// Negative control: when an unbatched configuration differs too, it is the
// identity that is broken, not only the batch.
TEST_F(StandinBatch, AnUnbatchedDifferenceIsStillAnIdentityBreak) {
  const CommandResult gate =
      Run({"gate"}, "wrong-hash-at-3-threads", "cpu-t1,cpu-t3,cpu-t2-b4", "identity.db");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  const RunResult run = m_.Latest("identity.db");
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kIdentityBroken) << DiagnosisText(run.diagnosis);
  EXPECT_EQ(CellNamed(run, "cpu-t2-b4").code, ResultCode::kPass);
}

// `compare` and `diff` name the place of a batched cell's first difference;
// export and import carry the batch and its places.
TEST_F(StandinBatch, CompareDiffAndBundlesCarryThePlace) {
  ASSERT_EQ(Run({"run"}, "ok", kBatchedConfigs, "both.db").exit_code, 0);
  EXPECT_EQ(Run({"run"}, "batch-variant", kBatchedConfigs, "both.db").exit_code, 1);
  const std::string together = "batch 4 together, slot 0 of 4 sequences, row 0 of 4";

  const CommandResult diff = m_.Samebits({"diff", "1", "2", "--db", m_.Path("both.db")});
  EXPECT_NE(diff.output.find(together), std::string::npos) << diff.output;

  const std::string bundle = m_.Path("variant.bundle.json");
  const CommandResult exported =
      m_.Samebits({"export", "2", "-o", bundle, "--db", m_.Path("both.db")});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const CommandResult compared = m_.Samebits({"compare", "1", bundle, "--db", m_.Path("both.db")});
  EXPECT_EQ(compared.exit_code, 1) << compared.output;
  EXPECT_NE(compared.output.find(together), std::string::npos) << compared.output;
  // Negative control: the unbatched cells agree across the two runs.
  EXPECT_EQ(compared.output.find("cpu-t1: "), std::string::npos) << compared.output;

  const CommandResult imported = m_.Samebits({"import", bundle, "--db", m_.Path("copy.db")});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  const RunResult original = m_.Latest("both.db");
  const RunResult copy = m_.Latest("copy.db");
  ASSERT_EQ(copy.cells.size(), original.cells.size());
  for (size_t i = 0; i < copy.cells.size(); ++i) {
    const harness::Configuration& a = original.cells[i].config;
    const harness::Configuration& b = copy.cells[i].config;
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.batch, a.batch) << a.name;
    EXPECT_EQ(b.batch_seed, a.batch_seed) << a.name;
    EXPECT_EQ(b.batch_schedule, a.batch_schedule) << a.name;
    ASSERT_EQ(copy.cells[i].steps.size(), original.cells[i].steps.size());
    for (size_t s = 0; s < copy.cells[i].steps.size(); ++s) {
      EXPECT_EQ(copy.cells[i].steps[s].batch, original.cells[i].steps[s].batch) << a.name << s;
    }
  }
  // Version 2 holds batches; a run made here also carries its machine's
  // name (the host's), which takes version 4.
  EXPECT_NE(harness::testing::ReadFile(bundle).find("\"version\": 4"), std::string::npos);
}

// The runner on its own: the flags are given only to batched cells, and
// the stand-in's echo is what makes the cell pass.
TEST(StandinBatchRunner, OnlyABatchedCellNamesTheBatch) {
  TempDir dir("standin_batch_runner");
  runner::Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario = "s";
  cell.scenario_file = WriteScenario(dir.path());
  cell.config.name = "cpu-t2";
  cell.config.threads = 2;
  runner::RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = FaultyEngine(dir.path(), "ok");
  const CellResult alone = runner::RunCell(cell, options);
  EXPECT_EQ(alone.code, ResultCode::kPass) << alone.message;
  for (const harness::StepRecord& s : alone.steps) EXPECT_FALSE(s.batch);

  cell.config = runner::OwnEngineConfiguration(*samebits::harness::testing::OwnProfile(),
                                               "cpu-t2-b6-staggered-seed42");
  const CellResult batched = runner::RunCell(cell, options);
  EXPECT_EQ(batched.code, ResultCode::kPass) << batched.message;
  ASSERT_FALSE(batched.steps.empty());
  for (const harness::StepRecord& s : batched.steps) {
    ASSERT_TRUE(s.batch);
    EXPECT_LE(s.batch->sequences, 6);
  }

  options.engine = FaultyEngine(dir.path(), "ignore-batch");
  const CellResult ignored = runner::RunCell(cell, options);
  EXPECT_EQ(ignored.code, ResultCode::kUnresolved);
  EXPECT_NE(ignored.message.find("its hello reports batch 1 (asked batch 6 staggered, seed 42)"),
            std::string::npos)
      << ignored.message;
}

}  // namespace
}  // namespace samebits::standin
