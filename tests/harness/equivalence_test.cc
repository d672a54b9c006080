// Equivalent scenarios (harness/analysis/equivalence.h): the gate fails a
// run where two scenarios declared equivalent give different bits at a
// position they share, with its own diagnosis kind naming both scenarios
// and the position; and passes one where they agree.
#include "harness/analysis/equivalence.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/analysis/judge.h"

namespace samebits::harness {
namespace {

StepRecord Step(int index, const std::string& kind, int position, uint64_t hash) {
  StepRecord s;
  s.index = index;
  s.kind = kind;
  s.position = position;
  s.xxh3_64 = hash;
  s.fnv1a64 = hash * 3;
  return s;
}

CellResult Cell(const std::string& scenario, const std::string& config,
                std::vector<StepRecord> steps) {
  CellResult c;
  c.checkpoint = "synthetic:tiny";
  c.scenario = scenario;
  c.config.name = config;
  c.code = ResultCode::kPass;
  c.steps = std::move(steps);
  return c;
}

// One extend of 3 tokens (every row) against three single-token extends:
// positions 10..13 shared. `chunked_hash_at_12` is the one-chunk run's hash
// at position 12 (0x12 when it agrees).
RunResult ExtendRun(uint64_t chunked_hash_at_12) {
  RunResult run;
  for (const char* config : {"cpu-t1", "cpu-t2"}) {
    run.cells.push_back(
        Cell("extend-3", config,
             {Step(0, "prefill", 10, 0x10), Step(1, "extend", 11, 0x11),
              Step(2, "extend", 12, chunked_hash_at_12), Step(3, "extend", 13, 0x13)}));
    run.cells.push_back(Cell(
        "extend-1x3", config,
        {Step(0, "prefill", 10, 0x10), Step(1, "extend", 11, 0x11), Step(2, "extend", 12, 0x12),
         Step(3, "extend", 13, 0x13), Step(4, "decode", 14, 0x99)}));  // not shared: not compared
  }
  return run;
}

const std::vector<ScenarioEquivalence> kDeclared = {{"extend-3", "extend-1x3", "chunking"}};

TEST(CheckEquivalences, AgreeingScenariosPass) {
  RunResult run = ExtendRun(0x12);
  const Diagnosis d = CheckEquivalences(run, kDeclared);
  EXPECT_TRUE(d.headline.empty()) << d.headline;
  for (const CellResult& c : run.cells) EXPECT_EQ(c.code, ResultCode::kPass);
}

// Negative control: the same two scenarios declared equivalent while they
// differ at position 12 must fail, in every configuration.
TEST(CheckEquivalences, ScenariosThatDifferFailNamingBothAndThePosition) {
  RunResult run = ExtendRun(0x77);
  const Diagnosis d = CheckEquivalences(run, kDeclared);
  EXPECT_EQ(d.kind, Diagnosis::Kind::kScenariosDiffer);
  EXPECT_NE(d.headline.find("extend-3 and extend-1x3 first differ at position 12"),
            std::string::npos)
      << d.headline;
  ASSERT_EQ(d.details.size(), 1u);  // rolled up over the two configurations
  EXPECT_NE(d.details[0].find("2 configurations (cpu-t1, cpu-t2) differ, first at position 12"),
            std::string::npos)
      << d.details[0];
  int failed = 0;
  for (const CellResult& c : run.cells) {
    if (c.code != ResultCode::kFail) continue;
    ++failed;
    EXPECT_EQ(c.scenario, "extend-1x3");
    EXPECT_NE(c.message.find("differs from scenario extend-3 (declared equivalent) at position 12"),
              std::string::npos);
  }
  EXPECT_EQ(failed, 2);
}

// A declaration whose scenarios feed different tokens at a shared position
// compares rows that need not agree: it fails, naming the fed tokens, even
// where the hashes happen to be equal.
TEST(CheckEquivalences, ADifferentFedTokenAtASharedPositionFails) {
  RunResult run = ExtendRun(0x12);
  for (CellResult& c : run.cells) {
    for (StepRecord& s : c.steps) s.input_token = s.position;
    if (c.scenario == "extend-1x3") c.steps[1].input_token = 99;  // position 11
  }
  const Diagnosis d = CheckEquivalences(run, kDeclared);
  EXPECT_NE(d.headline.find("first differ at position 11"), std::string::npos) << d.headline;
  ASSERT_EQ(d.details.size(), 1u);
  EXPECT_NE(d.details[0].find("fed token 11 vs 99: the scenarios do not feed the same tokens"),
            std::string::npos)
      << d.details[0];
}

TEST(CheckEquivalences, TheGateDiagnosisLeadsWithItsOwnKind) {
  RunResult run = ExtendRun(0x77);
  run.machine.arch = "x86_64";
  JudgeOptions options;
  options.equivalences = kDeclared;
  Judge(run, options);
  // No reference for these made-up scenarios; the equivalence leads anyway.
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kScenariosDiffer);
  EXPECT_STREQ(DiagnosisKindName(run.diagnosis.kind), "scenarios-differ");
  // Judging again (as the gate does after its reruns) gives the same.
  Judge(run, options);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kScenariosDiffer);
}

TEST(LoadEquivalences, ReadsTheListAndRefusesBadEntries) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("samebits_equivalences_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& text) {
    const std::string path = (dir / "suite.json").string();
    std::ofstream(path) << text;
    return path;
  };
  const auto good = LoadEquivalences(
      write(R"({"pairs": [], "equivalences": [{"scenarios": ["a", "b"], "why": "w"}]})"));
  ASSERT_EQ(good.size(), 1u);
  EXPECT_EQ(good[0].a, "a");
  EXPECT_EQ(good[0].b, "b");
  EXPECT_EQ(good[0].why, "w");
  EXPECT_TRUE(LoadEquivalences(write(R"({"pairs": []})")).empty());
  for (const char* bad :
       {R"({"equivalences": {}})", R"({"equivalences": [{"scenarios": ["a"]}]})",
        R"({"equivalences": [{"scenarios": ["a", "a"]}]})",
        R"({"equivalences": [{"scenarios": ["a", "b"], "typo": 1}]})", "not json"}) {
    try {
      LoadEquivalences(write(bad));
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("suite.json"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace samebits::harness
