// Golden-file tests of the four conformance report formats
// (harness/report/conformance_report.h): a fixed comparison is exported and
// compared byte for byte with tests/harness/golden/conformance.<ext>. After
// an intended change to a format, rewrite the goldens with this one command
//     SAMEBITS_UPDATE_GOLDEN=1 build/bin/samebits_report_tests
//         --gtest_filter='ConformanceReportGolden*'
// and review the diff like any other change (tests/harness/golden/README.md).
#include "harness/report/conformance_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/analysis/run_conformance.h"
#include "harness/report/report_formats.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness::report {
namespace {

namespace fs = std::filesystem;

// Returns a PASS cell of `n` steps with bundled rows of 4 logits; row s is
// (s, s + 1, s + 2, s + 3) plus `bump[s]` on its last value.
CellResult Cell(const std::string& checkpoint, const std::string& scenario,
                const std::string& config, const std::vector<float>& bump) {
  const int n = static_cast<int>(bump.size());
  CellResult c = testing::MakeCell(checkpoint, scenario, config, /*seed=*/1, n);
  c.dump = DumpData{};
  c.dump->row_length = 4;
  for (int s = 0; s < n; ++s) {
    const auto f = static_cast<float>(s);
    c.dump->values.insert(c.dump->values.end(), {f, f + 1, f + 2, f + 3 + bump[s]});
  }
  return c;
}

// The fixture: a pair that conforms, a pair that deviates from step 1 and
// whose contexts diverge at step 3 (a hostile scenario name), one with a
// NaN on one side only, one not compared, and one that conforms but is
// fragile (A's step 0 ties at its top, (0, 1, 2, 2), on both sides).
RunConformance Fixture() {
  RunResult a, b;
  a.cells.push_back(Cell("synthetic:tiny", "classic", "reference", {0, 0, 0}));
  b.cells.push_back(Cell("synthetic:tiny", "classic", "theirs", {0, 1e-4f, 0}));
  a.cells.push_back(Cell("gguf:<b>&x", "a|b<script>", "reference", {0, 0.5f, 0, 0}));
  CellResult diverging = Cell("gguf:<b>&x", "a|b<script>", "theirs", {0, 0, 0, 0});
  diverging.steps[2].token = 9;
  diverging.steps[3].input_token = 9;
  b.cells.push_back(diverging);
  a.cells.push_back(Cell("synthetic:wide", "classic", "reference", {0}));
  CellResult nan = Cell("synthetic:wide", "classic", "theirs", {0});
  nan.dump->values[1] = std::numeric_limits<float>::quiet_NaN();
  b.cells.push_back(nan);
  a.cells.push_back(Cell("synthetic:medium", "classic", "reference", {0}));
  a.cells.push_back(Cell("synthetic:tie", "classic", "reference", {-1, 0}));
  b.cells.push_back(Cell("synthetic:tie", "classic", "theirs", {-1, 0}));
  for (CellResult& c : b.cells) c.build->engine = "their-engine";
  ConformOptions options;
  options.config_a = "reference";
  options.config_b = "theirs";
  return ConformRuns(a, b, "run 1", "bundle theirs.json", options);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class ConformanceReportGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceReportGolden, MatchesGolden) {
  std::ostringstream out;
  WriteConformanceReport(Fixture(), GetParam(), out);
  const std::string ext(FindReportFormat(GetParam())->extension);
  const fs::path golden =
      fs::path(SAMEBITS_SOURCE_DIR) / "tests/harness/golden" / ("conformance." + ext);
  const char* update = std::getenv("SAMEBITS_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary | std::ios::trunc) << out.str();
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with SAMEBITS_UPDATE_GOLDEN=1";
  EXPECT_EQ(out.str(), ReadFile(golden))
      << "the " << GetParam() << " conformance report differs from " << golden
      << "; if the change is intended, rerun with SAMEBITS_UPDATE_GOLDEN=1 and review the diff";
}

INSTANTIATE_TEST_SUITE_P(AllFormats, ConformanceReportGolden,
                         ::testing::Values("md", "html", "json", "junit"));

TEST(ConformanceReport, JsonParsesAndCarriesNonFiniteValuesAsStrings) {
  std::ostringstream out;
  WriteConformanceReport(Fixture(), "json", out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["counts"]["conform"], 2);
  EXPECT_EQ(j["counts"]["deviate"], 2);
  EXPECT_EQ(j["counts"]["not_compared"], 1);
  // The NaN pair: its KL divergence is undefined, its max ULP has no number.
  const nlohmann::json& nan_step = j["pairs"][2]["steps"][0];
  EXPECT_EQ(nan_step["kl_divergence"], "nan");
  EXPECT_EQ(nan_step["ulp"]["max"], "NaN vs number");
  EXPECT_EQ(j["pairs"][1]["context_divergence"]["step"], 3);
}

TEST(ConformanceReport, JsonCarriesTheStatisticsAndKeepsTheOldKeys) {
  std::ostringstream out;
  WriteConformanceReport(Fixture(), "json", out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const nlohmann::json& summary = j["pairs"][0]["summary"];
  for (const char* key : {"nmse_max",        "nmse_mean",
                          "kld_steps",       "kld_mean",
                          "kld_p99",         "kld_max",
                          "top1_agreements", "top_overlap_mean",
                          "max_abs_diff",    "ulp",
                          "nmse_mean_se",    "kld_mean_se",
                          "kld_median",      "kld_p99_9",
                          "delta_p_steps",   "delta_p_mean",
                          "delta_p_mean_se", "delta_p_rms",
                          "delta_p_rms_se",  "top1_percent",
                          "top1_percent_se", "top_overlap_mean_se",
                          "fragile_steps",   "unstable_steps",
                          "stability"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  EXPECT_EQ(summary["top1_percent"], 100.0);
  // The deviating pair names its first step and that step's worst token.
  const nlohmann::json& deviating = j["pairs"][1];
  EXPECT_EQ(deviating["verdict"], "DEVIATES");
  EXPECT_EQ(deviating["first_deviating_step"], 1);
  EXPECT_EQ(deviating["first_deviating_token"], 3);
  EXPECT_EQ(deviating["verdict_line"],
            "DEVIATES at step 1, token 3 (A 4.5, B 4): NMSE 7.30e-03 > 1.00e-04 (stable)");
  // The tie: CONFORMS, and fragile at step 0 (margin 0).
  const nlohmann::json& tie = j["pairs"][4];
  EXPECT_EQ(tie["verdict"], "CONFORMS");
  EXPECT_EQ(tie["stability"], "fragile");
  EXPECT_EQ(tie["steps"][0]["stability"], "fragile");
  EXPECT_EQ(tie["steps"][0]["margin"], 0.0);
  EXPECT_EQ(tie["steps"][1]["stability"], "stable");
}

TEST(ConformanceReport, HostileNamesAreEscapedInEveryFormat) {
  for (const char* format : {"md", "html", "junit"}) {
    std::ostringstream out;
    WriteConformanceReport(Fixture(), format, out);
    EXPECT_EQ(out.str().find("<script>"), std::string::npos) << format;
    EXPECT_EQ(out.str().find("<b>"), std::string::npos) << format;
  }
}

TEST(ConformanceReport, UnknownFormatIsRefused) {
  std::ostringstream out;
  EXPECT_THROW(WriteConformanceReport(Fixture(), "pdf", out), std::invalid_argument);
}

}  // namespace
}  // namespace samebits::harness::report
