// The gate's raw logit dumps and stored reports, end to end with the real
// `samebits` and the stand-in engine (tests/standins/standin_engine.cc),
// whose wrong-hash-at-3-threads fault moves one logit of step 3 by one ulp
// at 3 threads:
//   - the gate reruns the diverging pair with --dump-logits by itself, so
//     its report gives the ULP statistics without the user asking;
//   - `samebits report RUN` on the stored run gives exactly the gate's own
//     Markdown and JSON (the store keeps the whole diagnosis and the dumps);
//   - `run --dump-logits` keeps one whole dump per cell next to the database.
#include <gtest/gtest.h>

#include <filesystem>
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

namespace fs = std::filesystem;

// Three children per run keep these tests quick on two cores.
// The stand-in's shape: 8 output rows of 32 logits.
constexpr uintmax_t kDumpBytes = uintmax_t{8} * 32 * 4;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class StandinGateDumps : public ::testing::Test {
 protected:
  StandinGateDumps() : dir_("standin_gate_dumps") {}

  void SetUp() override {
    scenario_ = WriteScenario(dir_.path());
    db_ = (dir_.path() / "db" / "runs.db").string();
    refs_ = (dir_.path() / "references").string();
    const CommandResult made = Samebits({"reference", "generate"}, "ok");
    ASSERT_EQ(made.exit_code, 0) << made.command << "\n" << made.output;
  }

  // Returns the result of `samebits <words> --engine <stand-in with fault> ...`.
  CommandResult Samebits(std::vector<std::string> words, const std::string& fault) {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    for (const std::string& a :
         {std::string("--engine"), FaultyEngine(dir_.path(), fault), std::string("--checkpoint"),
          std::string("synthetic:tiny"), std::string("--scenario"), scenario_,
          std::string("--config"), std::string(kReferenceAndTwoThreadCounts),
          std::string("--timeout"), std::string("20"), std::string("-j"), std::string("2"),
          std::string("--db"), db_, std::string("--references-dir"), refs_}) {
      argv.push_back(a);
    }
    argv.push_back("-q");
    return RunCommand(argv);
  }

  harness::RunResult Latest() { return LatestRun(db_); }

  // Returns `samebits report <id> -f <format>` of the stored run.
  CommandResult StoredReport(int64_t id, const std::string& format) {
    return RunCommand(
        {BinDir() + "/samebits", "report", std::to_string(id), "-f", format, "--db", db_});
  }

  // Checks that the gate's reports and the stored run's are identical.
  void ExpectStoredReportsMatch(const std::string& md, const std::string& json) {
    const harness::RunResult run = Latest();
    const CommandResult stored_md = StoredReport(run.run_id, "md");
    ASSERT_EQ(stored_md.exit_code, 0) << stored_md.output;
    EXPECT_EQ(stored_md.output, Slurp(md));
    const CommandResult stored_json = StoredReport(run.run_id, "json");
    ASSERT_EQ(stored_json.exit_code, 0) << stored_json.output;
    // The time split is this process's measurement, not stored: the gate's
    // report has it (the run's and each cell's), the stored run's has none.
    nlohmann::ordered_json fresh = nlohmann::ordered_json::parse(Slurp(json));
    ASSERT_TRUE(fresh.contains("timing"));
    fresh.erase("timing");
    for (auto& cell : fresh["cells"]) {
      ASSERT_TRUE(cell.contains("timing"));
      cell.erase("timing");
    }
    EXPECT_EQ(stored_json.output, fresh.dump(2) + "\n");
  }

  TempDir dir_;
  std::string scenario_, db_, refs_;
};

const harness::CellResult* FindCell(const harness::RunResult& run, const std::string& config) {
  for (const harness::CellResult& c : run.cells) {
    if (c.config.name == config) return &c;
  }
  return nullptr;
}

TEST_F(StandinGateDumps, GateReportGivesUlpStatisticsUnaskedAndTheStoredRunSaysTheSame) {
  const std::string md = (dir_.path() / "gate.md").string();
  const std::string json = (dir_.path() / "gate.json").string();
  const CommandResult r =
      Samebits({"gate", "--report-md", md, "--report-json", json}, "wrong-hash-at-3-threads");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string text = Slurp(md);
  // One value one ulp away; the argmax (the stand-in puts 5.0 at (3*7+3)%32 = 24) unchanged.
  EXPECT_NE(text.find("| reference vs cpu-t3 | 3 | 1 of 32 | 1 | "), std::string::npos) << text;
  EXPECT_NE(text.find("| same (24) |"), std::string::npos) << text;
  EXPECT_NE(text.find("first differ at step 3"), std::string::npos) << text;

  // The rerun's dumps are stored with the two cells, next to the database.
  const harness::RunResult run = Latest();
  for (const char* config : {"reference", "cpu-t3"}) {
    const harness::CellResult* c = FindCell(run, config);
    ASSERT_NE(c, nullptr) << config;
    ASSERT_FALSE(c->dump_path.empty()) << config;
    // Stored absolute when outside the project root, else relative to it
    // (which is then this test's current folder).
    const fs::path dump = fs::absolute(c->dump_path);
    EXPECT_EQ(dump.parent_path().parent_path(), dir_.path() / "db" / "dumps") << dump;
    EXPECT_EQ(fs::file_size(dump), kDumpBytes) << dump;
  }
  EXPECT_TRUE(FindCell(run, "cpu-t1")->dump_path.empty());  // it agreed; not rerun
  ASSERT_FALSE(run.diagnosis.divergences.empty());
  EXPECT_EQ(run.diagnosis.divergences[0].config_b, "cpu-t3");
  EXPECT_FALSE(run.diagnosis.details.empty());

  ExpectStoredReportsMatch(md, json);
}

TEST_F(StandinGateDumps, TracedGateReportOfTheStoredRunNamesTheLayerToo) {
  const std::string md = (dir_.path() / "gate.md").string();
  const std::string json = (dir_.path() / "gate.json").string();
  const CommandResult r = Samebits({"gate", "--trace", "--report-md", md, "--report-json", json},
                                   "wrong-hash-at-3-threads");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string text = Slurp(md);
  EXPECT_NE(text.find("layer 1, op ffn_down"), std::string::npos)
      << text;  // intraword: not escaped
  EXPECT_NE(text.find("| reference vs cpu-t3 | 3 | 1 of 32 | 1 | "), std::string::npos) << text;
  const harness::RunResult run = Latest();
  ASSERT_FALSE(run.diagnosis.divergences.empty());
  EXPECT_EQ(run.diagnosis.divergences[0].layer, 1);
  EXPECT_EQ(run.diagnosis.divergences[0].op, "ffn_down");
  ExpectStoredReportsMatch(md, json);
}

TEST_F(StandinGateDumps, RunWithDumpLogitsKeepsOneWholeDumpPerCell) {
  const CommandResult r = Samebits({"run", "--dump-logits"}, "ok");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const harness::RunResult run = Latest();
  ASSERT_EQ(run.cells.size(), 3u);
  fs::path folder;
  for (const harness::CellResult& c : run.cells) {
    ASSERT_FALSE(c.dump_path.empty()) << c.config.name;
    const fs::path dump = fs::absolute(c.dump_path);
    EXPECT_EQ(fs::file_size(dump), kDumpBytes) << dump;
    // The ':' of the checkpoint is made safe; a hash keeps names distinct.
    const std::string name = dump.filename().string();
    EXPECT_EQ(name.rfind("synthetic_tiny.standin." + c.config.name + "-", 0), 0u) << name;
    EXPECT_TRUE(name.ends_with(".f32")) << name;
    if (folder.empty()) folder = dump.parent_path();
    EXPECT_EQ(dump.parent_path(), folder);  // one folder per run
  }
  EXPECT_EQ(folder.parent_path(), dir_.path() / "db" / "dumps");
  EXPECT_EQ(folder.filename().string().rfind("run-", 0), 0u) << folder;
}

}  // namespace
}  // namespace samebits::standin
