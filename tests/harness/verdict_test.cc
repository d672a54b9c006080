// The tables of result codes and diagnosis kinds (harness/analysis/results.h)
// and the one rule for a run's verdict (harness/analysis/verdict.h).
#include "harness/analysis/verdict.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

TEST(ResultCodes, TheTableHoldsEveryCodeOnceWithADistinctName) {
  std::set<std::string> names;
  for (size_t i = 0; i < kResultCodes.size(); ++i) {
    const ResultCode code = static_cast<ResultCode>(i);
    EXPECT_EQ(&CodeInfo(code), &kResultCodes[i]) << i;
    names.insert(ResultCodeName(code));
    ResultCode parsed{};
    ASSERT_TRUE(ParseResultCode(ResultCodeName(code), &parsed));
    EXPECT_EQ(parsed, code);
    EXPECT_NE(std::string(CodeInfo(code).label), "");
  }
  EXPECT_EQ(names.size(), kResultCodes.size());
  ResultCode parsed{};
  EXPECT_FALSE(ParseResultCode("pass", &parsed));
}

TEST(ResultCodes, WhichCodesFailARun) {
  std::set<std::string> failing;
  for (const ResultCodeInfo& info : kResultCodes) {
    if (IsFailure(info.code)) failing.insert(info.name);
  }
  // FIXED fails as lit's XPASS does; KNOWN (XFAIL) does not.
  EXPECT_EQ(failing, (std::set<std::string>{"FAIL", "UNRESOLVED", "TIMEOUT", "FIXED"}));
}

TEST(DiagnosisKinds, EveryKindOnceWithADistinctNameAndSeverity) {
  std::set<std::string> names;
  std::set<int> severities;
  for (const DiagnosisKindInfo& info : kDiagnosisKinds) {
    EXPECT_EQ(&KindInfo(info.kind), &info);
    names.insert(info.name);
    severities.insert(info.severity);
    Diagnosis::Kind parsed{};
    ASSERT_TRUE(ParseDiagnosisKind(info.name, &parsed));
    EXPECT_EQ(parsed, info.kind);
  }
  EXPECT_EQ(names.size(), kDiagnosisKinds.size());
  EXPECT_EQ(severities.size(), kDiagnosisKinds.size());
  EXPECT_LT(KindInfo(Diagnosis::Kind::kIdentityBroken).severity,
            KindInfo(Diagnosis::Kind::kChildFailures).severity);
}

RunResult RunOf(std::initializer_list<ResultCode> codes) {
  RunResult run;
  for (ResultCode code : codes) {
    run.cells.push_back(testing::MakeCell("synthetic:tiny", "classic", "reference", 7));
    run.cells.back().code = code;
  }
  return run;
}

TEST(Verdict, OneRuleForTheGateTheStoreAndTheReports) {
  RunResult run = RunOf({ResultCode::kPass, ResultCode::kUnsupported});
  EXPECT_EQ(RunVerdict(run), Verdict::kPass);
  EXPECT_EQ(GateExitCode(RunVerdict(run)), 0);
  EXPECT_STREQ(VerdictName(RunVerdict(run)), "PASS");
  EXPECT_TRUE(GatePasses(run));

  run = RunOf({ResultCode::kUnsupported, ResultCode::kUnsupported});
  EXPECT_EQ(RunVerdict(run), Verdict::kNothingChecked);
  EXPECT_EQ(GateExitCode(RunVerdict(run)), 2);
  EXPECT_STREQ(VerdictName(RunVerdict(run)), "UNCHECKED");
  EXPECT_FALSE(GatePasses(run));

  run = RunOf({ResultCode::kPass, ResultCode::kTimeout});
  EXPECT_EQ(RunVerdict(run), Verdict::kFail);
  EXPECT_EQ(GateExitCode(RunVerdict(run)), 1);

  // Every cell passed, but the diagnosis found something (no reference).
  run = RunOf({ResultCode::kPass});
  run.diagnosis.kind = Diagnosis::Kind::kNoReference;
  EXPECT_EQ(RunVerdict(run), Verdict::kFail);
  EXPECT_STREQ(VerdictName(RunVerdict(run)), "FAIL");
}

}  // namespace
}  // namespace samebits::harness
