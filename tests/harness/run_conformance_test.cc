// Conformance of two runs (harness/analysis/run_conformance.h): which cells
// are paired, where greedy continuations diverge, and what is not compared.
#include "harness/analysis/run_conformance.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

using testing::MakeCell;

constexpr int kVocab = 4;

// Returns a PASS cell of `n` steps whose bundled logit rows are
// (s, s + 1, s + 2, s + 3 + bump) at step s: the argmax is always 3.
CellResult CellWithRows(const std::string& config, int n, float bump = 0) {
  CellResult c = MakeCell("synthetic:tiny", "classic", config, /*seed=*/1, n);
  c.dump = DumpData{};
  c.dump->row_length = kVocab;
  for (int s = 0; s < n; ++s) {
    const auto f = static_cast<float>(s);
    c.dump->values.insert(c.dump->values.end(), {f, f + 1, f + 2, f + 3 + bump});
    c.dump->rows.push_back(DumpRowStats{3, f + 3 + bump, 0, 0});
  }
  return c;
}

RunResult MakeRun(std::vector<CellResult> cells) {
  RunResult r;
  r.cells = std::move(cells);
  return r;
}

ConformOptions Options(const std::string& config_a = "", const std::string& config_b = "") {
  ConformOptions o;
  o.config_a = config_a;
  o.config_b = config_b;
  return o;
}

TEST(RunConformance, EqualRowsConformWithNmseZero) {
  const RunResult a = MakeRun({CellWithRows("reference", 4)});
  const RunResult b = MakeRun({CellWithRows("reference", 4)});
  const RunConformance c = ConformRuns(a, b, "A", "B", Options());
  ASSERT_EQ(c.pairs.size(), 1u);
  const PairConformance& p = c.pairs[0];
  EXPECT_TRUE(p.compared) << p.reason;
  EXPECT_EQ(p.summary.steps, 4);
  EXPECT_EQ(p.summary.max_nmse, 0.0);
  EXPECT_STREQ(PairVerdictName(p), "CONFORMS");
  EXPECT_EQ(c.ExitCode(), 0);
  EXPECT_EQ(DescribeCoverage(p), "steps 0-3 of 4");
}

TEST(RunConformance, NamedConfigurationsArePairedAcrossEngines) {
  // B's only cell has another name: chosen by --config-b, measured; its last
  // logit is 0.5 larger at every step.
  const RunResult a = MakeRun({CellWithRows("cpu-t1", 4), CellWithRows("reference", 4)});
  const RunResult b = MakeRun({CellWithRows("theirs-fa-on", 4, 0.5f)});
  const RunConformance c = ConformRuns(a, b, "A", "B", Options("reference", "theirs-fa-on"));
  ASSERT_EQ(c.pairs.size(), 1u);
  const PairConformance& p = c.pairs[0];
  EXPECT_EQ(p.config_a, "reference");
  EXPECT_EQ(p.config_b, "theirs-fa-on");
  ASSERT_TRUE(p.compared) << p.reason;
  // Step 0: rows (0, 1, 2, 3) and (0, 1, 2, 3.5): 0.25 / 14.
  EXPECT_DOUBLE_EQ(p.steps[0].nmse, 0.25 / 14);
  EXPECT_STREQ(PairVerdictName(p), "DEVIATES");
  EXPECT_EQ(p.summary.first_deviating_step, 0);
  EXPECT_EQ(c.ExitCode(), 1);
  // A looser threshold passes it: the largest step NMSE is step 0's.
  ConformOptions loose = Options("reference", "theirs-fa-on");
  loose.threshold.max_nmse = 0.25 / 14;
  EXPECT_EQ(ConformRuns(a, b, "A", "B", loose).ExitCode(), 0);
}

TEST(RunConformance, WithoutNamesBTakesAsConfigurationOfTheSameName) {
  const RunResult a = MakeRun({CellWithRows("cpu-t2", 3)});
  const RunResult b = MakeRun({CellWithRows("reference", 3, 1), CellWithRows("cpu-t2", 3)});
  const RunConformance c = ConformRuns(a, b, "A", "B", Options());
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_EQ(c.pairs[0].config_b, "cpu-t2");
  EXPECT_EQ(c.pairs[0].summary.max_nmse, 0.0);
}

TEST(RunConformance, StopsWhereTheContextsDiverge) {
  // B chose another token at step 1, so step 2 fed another input: steps 2
  // and 3 are never measured (their logits come from different contexts).
  const RunResult a = MakeRun({CellWithRows("reference", 4)});
  CellResult cb = CellWithRows("reference", 4);
  cb.steps[1].token = 99;
  cb.steps[2].input_token = 99;
  cb.steps[3].input_token = 7;
  const RunConformance c = ConformRuns(a, MakeRun({cb}), "A", "B", Options());
  const PairConformance& p = c.pairs[0];
  ASSERT_TRUE(p.compared);
  EXPECT_EQ(p.summary.steps, 2);
  ASSERT_TRUE(p.divergence.has_value());
  EXPECT_EQ(p.divergence->step_index, 2);
  EXPECT_NE(p.divergence->detail.find("input token 42 (A) vs 99 (B)"), std::string::npos)
      << p.divergence->detail;
  EXPECT_NE(p.divergence->detail.find("step 1 chose token"), std::string::npos)
      << p.divergence->detail;
  EXPECT_NE(DescribeCoverage(p).find("steps 0-1 of 4 (the contexts diverge at step 2"),
            std::string::npos)
      << DescribeCoverage(p);
  // What was measured conforms; the coverage says what was not.
  EXPECT_STREQ(PairVerdictName(p), "CONFORMS");
}

// Returns B's cell of 4 steps that chose token 99 at step 1, so step 2 fed
// another token than A's.
CellResult ChoseOtherTokenAtStep1() {
  CellResult cb = CellWithRows("reference", 4);
  cb.steps[1].token = 99;
  cb.steps[2].input_token = 99;
  return cb;
}

// Where B can be rerun, the divergence is not the end: B rerun with A's
// tokens forced (its decodes as single-token extends) is measured over every
// step, and the coverage says B's own continuation diverged and was forced.
TEST(RunConformance, WhereBCanBeRerunItIsMeasuredWithATokensForced) {
  const RunResult a = MakeRun({CellWithRows("reference", 4)});
  const CellResult cb = ChoseOtherTokenAtStep1();
  ConformOptions options = Options();
  int reruns = 0;
  options.rerun_b_forced = [&](const CellResult& ca, const CellResult& b) {
    ++reruns;
    EXPECT_EQ(ca.steps.size(), 4u);
    EXPECT_EQ(b.steps[2].input_token, 99);
    CellResult forced = CellWithRows("reference", 4, /*bump=*/1e-6f);
    for (size_t i = 0; i < forced.steps.size(); ++i) {
      forced.steps[i].input_token = ca.steps[i].input_token;
      if (forced.steps[i].kind == "decode") forced.steps[i].kind = "extend";
    }
    return forced;
  };
  const RunConformance c = ConformRuns(a, MakeRun({cb}), "A", "B", options);
  EXPECT_EQ(reruns, 1);
  const PairConformance& p = c.pairs[0];
  ASSERT_TRUE(p.compared) << p.reason;
  EXPECT_EQ(p.summary.steps, 4);
  EXPECT_FALSE(p.divergence.has_value());
  ASSERT_TRUE(p.forced.has_value());
  EXPECT_EQ(p.forced->step_index, 2);
  EXPECT_GT(p.summary.max_nmse, 0.0);  // the rerun's rows were measured, not B's first ones
  EXPECT_NE(DescribeCoverage(p).find("steps 0-3 of 4 (B's own continuation diverged at step 2"),
            std::string::npos)
      << DescribeCoverage(p);
  EXPECT_NE(DescribeCoverage(p).find("rerun with A's tokens forced"), std::string::npos);
}

// A rerun that fails leaves the divergence and says why; a rerun whose
// contexts still differ is not taken as forced (the kinds may differ only
// as a decode of A and an extend of B).
TEST(RunConformance, AFailedOrWrongRerunLeavesTheDivergence) {
  const RunResult a = MakeRun({CellWithRows("reference", 4)});
  const CellResult cb = ChoseOtherTokenAtStep1();
  ConformOptions options = Options();
  options.rerun_b_forced = [](const CellResult&, const CellResult& b) {
    CellResult failed = b;
    failed.code = ResultCode::kUnresolved;
    failed.message = "the engine refused the forced scenario";
    return failed;
  };
  RunConformance c = ConformRuns(a, MakeRun({cb}), "A", "B", options);
  ASSERT_TRUE(c.pairs[0].divergence.has_value());
  EXPECT_FALSE(c.pairs[0].forced.has_value());
  ASSERT_EQ(c.pairs[0].notes.size(), 1u);
  EXPECT_NE(c.pairs[0].notes[0].find("the engine refused the forced scenario"), std::string::npos);
  options.rerun_b_forced = [](const CellResult&, const CellResult& b) { return b; };
  c = ConformRuns(a, MakeRun({cb}), "A", "B", options);
  ASSERT_TRUE(c.pairs[0].divergence.has_value());
  EXPECT_EQ(c.pairs[0].divergence->step_index, 2);
  EXPECT_EQ(c.pairs[0].summary.steps, 2);
}

TEST(RunConformance, DivergenceAtTheFirstStepComparesNothing) {
  const RunResult a = MakeRun({CellWithRows("reference", 2)});
  CellResult cb = CellWithRows("reference", 2);
  cb.steps[0].position = 3;
  const RunConformance c = ConformRuns(a, MakeRun({cb}), "A", "B", Options());
  EXPECT_FALSE(c.pairs[0].compared);
  EXPECT_EQ(c.pairs[0].reason, "no step fed the same context on both sides");
  EXPECT_EQ(c.ExitCode(), 2);
}

TEST(RunConformance, SaysWhyAPairIsNotCompared) {
  CellResult no_dump = MakeCell("synthetic:tiny", "classic", "reference", 1, 4);
  CellResult unsupported = CellWithRows("reference", 4);
  unsupported.code = ResultCode::kUnsupported;
  unsupported.message = "this machine lacks avx512";
  CellResult other_scenario = CellWithRows("reference", 4);
  other_scenario.scenario_xxh3 = "1111111111111111";
  CellResult this_scenario = CellWithRows("reference", 4);
  this_scenario.scenario_xxh3 = "2222222222222222";
  CellResult wide = CellWithRows("reference", 4);
  wide.dump->row_length = 8;
  wide.dump->values.resize(32);

  const auto reason = [](const CellResult& x, const CellResult& y, const ConformOptions& o) {
    const RunConformance c = ConformRuns(MakeRun({x}), MakeRun({y}), "A", "B", o);
    EXPECT_EQ(c.ExitCode(), 2);
    return c.pairs.at(0).reason;
  };
  EXPECT_NE(reason(CellWithRows("reference", 4), no_dump, Options()).find("no raw logit dump"),
            std::string::npos);
  EXPECT_EQ(reason(unsupported, CellWithRows("reference", 4), Options()),
            "A's cell reference is UNSUPPORTED: this machine lacks avx512");
  EXPECT_NE(reason(this_scenario, other_scenario, Options()).find("not the same file"),
            std::string::npos);
  EXPECT_EQ(reason(CellWithRows("reference", 4), wide, Options()),
            "the logit rows differ in length: 4 values (A) vs 8 (B)");
  EXPECT_EQ(reason(CellWithRows("reference", 4), CellWithRows("reference", 4),
                   Options("reference", "cpu-t9")),
            "B has no cell of this checkpoint and scenario named cpu-t9");
}

TEST(RunConformance, KeysOnOneSideOnlyAreListedAsNotCompared) {
  CellResult other = CellWithRows("reference", 2);
  other.checkpoint = "synthetic:wide";
  const RunConformance c =
      ConformRuns(MakeRun({CellWithRows("reference", 2)}),
                  MakeRun({CellWithRows("reference", 2), other}), "A", "B", Options());
  ASSERT_EQ(c.pairs.size(), 2u);
  EXPECT_EQ(c.conform, 1);
  EXPECT_EQ(c.not_compared, 1);
  EXPECT_EQ(c.pairs[1].reason, "A has no cell of this checkpoint and scenario");
  EXPECT_EQ(c.ExitCode(), 0);
}

TEST(RunConformance, UnequalStepCountsAreNoted) {
  const RunConformance c =
      ConformRuns(MakeRun({CellWithRows("reference", 4)}), MakeRun({CellWithRows("reference", 3)}),
                  "A", "B", Options());
  const PairConformance& p = c.pairs[0];
  EXPECT_EQ(p.summary.steps, 3);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0], "4 steps (A) vs 3 (B)");
}

}  // namespace
}  // namespace samebits::harness
