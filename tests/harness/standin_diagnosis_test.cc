// The gate's diagnosis rules end to end, with the real `samebits` and the
// stand-in engine: the portable profile's math is the project's own code, so
// a portable fingerprint that differs from the reference's is a code change
// (with the bisect command), never "your math library rounds differently";
// and a code change leads the headline when the math library differs too.
#include <gtest/gtest.h>

#include <string>

#include "harness/analysis/results.h"
#include "tests/harness/standin_matrix.h"

namespace samebits::standin {
namespace {

using harness::Diagnosis;

class StandinDiagnosis : public ::testing::Test {
 protected:
  StandinDiagnosis() : m_("standin_diagnosis") {}
  void SetUp() override {
    const CommandResult made = m_.Matrix({"reference", "generate"}, "ok");
    ASSERT_EQ(made.exit_code, 0) << made.command << "\n" << made.output;
  }
  StandinMatrix m_;
};

std::string AllText(const Diagnosis& d) {
  std::string text = d.headline + "\n";
  for (const std::string& line : d.details) text += line + "\n";
  return text;
}

TEST_F(StandinDiagnosis, AChangedPortableFingerprintIsACodeChange) {
  const CommandResult gate = m_.Matrix({"gate"}, "portable-changed");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  const harness::RunResult run = m_.Latest();
  const std::string text = AllText(run.diagnosis);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kCodeChanged) << text;
  EXPECT_NE(run.diagnosis.headline.find("the code changed the numbers"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("rounds differently"), std::string::npos) << text;
  EXPECT_NE(text.find("git bisect start HEAD"), std::string::npos) << text;
  EXPECT_NE(text.find("git bisect run"), std::string::npos) << text;
}

TEST_F(StandinDiagnosis, ACodeChangeLeadsAndTheMathLibraryFollowsAsAlso) {
  const CommandResult gate = m_.Matrix({"gate"}, "code-and-libm-changed");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  const harness::RunResult run = m_.Latest();
  const std::string text = AllText(run.diagnosis);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kCodeChanged) << text;
  EXPECT_NE(run.diagnosis.headline.find("the code changed the numbers"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Also: "), std::string::npos) << text;
  EXPECT_NE(text.find("math library rounds differently"), std::string::npos) << text;
}

// Negative control: a different libm alone is still the math library.
TEST_F(StandinDiagnosis, ADifferentLibmAloneIsTheMathLibrary) {
  const CommandResult gate = m_.Matrix({"gate"}, "libm-changed");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  const harness::RunResult run = m_.Latest();
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kMathLibraryDiffers) << AllText(run.diagnosis);
}

}  // namespace
}  // namespace samebits::standin
