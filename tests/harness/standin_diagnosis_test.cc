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

  // Runs the gate with the stand-in under `fault`, expects it to fail, and
  // returns the stored run's diagnosis.
  Diagnosis GateWith(const std::string& fault) {
    const CommandResult gate = m_.Matrix({"gate"}, fault);
    EXPECT_EQ(gate.exit_code, 1) << gate.output;
    return m_.Latest().diagnosis;
  }

  // Expects a code-change headline with the bisect advice.
  void ExpectCodeChanged(const Diagnosis& d) {
    const std::string text = DiagnosisText(d);
    EXPECT_EQ(d.kind, Diagnosis::Kind::kCodeChanged) << text;
    EXPECT_NE(d.headline.find("the code changed the numbers"), std::string::npos) << text;
    EXPECT_NE(text.find("samebits bisect"), std::string::npos) << text;
  }

  StandinMatrix m_;
};

TEST_F(StandinDiagnosis, AChangedPortableFingerprintIsACodeChange) {
  const Diagnosis d = GateWith("portable-changed");
  ExpectCodeChanged(d);
  EXPECT_EQ(DiagnosisText(d).find("rounds differently"), std::string::npos) << DiagnosisText(d);
}

TEST_F(StandinDiagnosis, ACodeChangeLeadsAndTheMathLibraryFollowsAsAlso) {
  const Diagnosis d = GateWith("code-and-libm-changed");
  ExpectCodeChanged(d);
  EXPECT_NE(DiagnosisText(d).find("Also: All configurations agree with each other but not with"),
            std::string::npos)
      << DiagnosisText(d);
  EXPECT_NE(DiagnosisText(d).find("math library rounds differently"), std::string::npos)
      << DiagnosisText(d);
}

// Negative control: a different libm alone is still the math library.
TEST_F(StandinDiagnosis, ADifferentLibmAloneIsTheMathLibrary) {
  const Diagnosis d = GateWith("libm-changed");
  EXPECT_EQ(d.kind, Diagnosis::Kind::kMathLibraryDiffers) << DiagnosisText(d);
}

}  // namespace
}  // namespace samebits::standin
