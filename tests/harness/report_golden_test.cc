// Golden-file tests of the four report formats: each fixture run (see
// report_fixture.h) is exported and compared byte for byte with
// tests/harness/golden/<fixture>.<ext>. After an intended change to a
// format, rewrite the goldens with
//     SAMEBITS_UPDATE_GOLDEN=1 build/bin/samebits_report_tests --gtest_filter='ReportGolden*'
// and review the diff like any other change (tests/harness/golden/README.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/report/exporter.h"
#include "harness/report/report_formats.h"
#include "tests/harness/report_fixture.h"

namespace samebits::harness::report {
namespace {

namespace fs = std::filesystem;

fs::path GoldenDir() {
  return fs::path(SAMEBITS_SOURCE_DIR) / "tests/harness/golden";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Returns a fresh directory for this test's dumps.
fs::path TempDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("samebits_report_golden_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void CheckGolden(const RunResult& run, const std::string& fixture, const std::string& format,
                 const ReportOptions& options) {
  std::ostringstream out;
  WriteReport(run, format, out, options);
  const std::string ext(FindReportFormat(format)->extension);
  const fs::path golden = GoldenDir() / (fixture + "." + ext);
  const char* update = std::getenv("SAMEBITS_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary | std::ios::trunc) << out.str();
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with SAMEBITS_UPDATE_GOLDEN=1";
  const std::string expected = ReadFile(golden);
  EXPECT_EQ(out.str(), expected) << "the " << format << " report of " << fixture << " differs from "
                                 << golden
                                 << "; if the change is intended, rerun with "
                                    "SAMEBITS_UPDATE_GOLDEN=1 and review the diff";
}

class ReportGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportGolden, MixedRunMatchesGolden) {
  const fs::path dir = TempDir("mixed_" + GetParam());
  testing::WriteMixedRunDumps(dir.string());
  ReportOptions options;
  options.dump_base_dir = dir.string();
  CheckGolden(testing::MixedRun(), "mixed_run", GetParam(), options);
  fs::remove_all(dir);
}

TEST_P(ReportGolden, MathLibraryRunMatchesGolden) {
  CheckGolden(testing::MathLibraryRun(), "math_library_run", GetParam(), ReportOptions{});
}

INSTANTIATE_TEST_SUITE_P(AllFormats, ReportGolden,
                         ::testing::Values("md", "html", "json", "junit"));

}  // namespace
}  // namespace samebits::harness::report
