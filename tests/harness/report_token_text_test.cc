// The decoded text of each step's token (protocol `text`): the Markdown and
// HTML agreement matrices show it under the step columns, escaped, and a
// run without any text looks as it did before (the goldens cover that).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "harness/report/exporter.h"
#include "tests/harness/report_fixture.h"

namespace samebits::harness::report {
namespace {

// Returns `MixedRun` with every step's token decoded to `text`.
RunResult RunWithText(const std::string& text) {
  RunResult run = testing::MixedRun();
  for (CellResult& cell : run.cells) {
    for (StepRecord& s : cell.steps) s.text = text;
  }
  return run;
}

TEST(ReportTokenText, MatricesShowTheBaseTokensTextEscaped) {
  const std::string hostile = "<b>x|y`\n";
  const RunResult run = RunWithText(hostile);
  const int token = run.cells.front().steps.front().token;
  const std::string md = testing::ExportToString(run, "md");
  EXPECT_NE(md.find("| Token ("), std::string::npos) << md;
  EXPECT_NE(md.find(std::to_string(token) + " \"\\<b\\>x\\|y\\`\\\\n\""), std::string::npos) << md;
  EXPECT_EQ(md.find("<b>"), std::string::npos);
  const std::string html = testing::ExportToString(run, "html");
  EXPECT_NE(html.find("<td class=\"token\""), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;x|y`\\n"), std::string::npos);
  EXPECT_EQ(html.find("<b>x"), std::string::npos);
  const std::string json = testing::ExportToString(run, "json");
  EXPECT_NE(json.find("\"text\""), std::string::npos);
}

TEST(ReportTokenText, NoTextNoTokenRow) {
  const RunResult run = testing::MixedRun();
  EXPECT_EQ(testing::ExportToString(run, "md").find("| Token ("), std::string::npos);
  EXPECT_EQ(testing::ExportToString(run, "html").find("class=\"token\""), std::string::npos);
  EXPECT_EQ(testing::ExportToString(run, "json").find("\"text\""), std::string::npos);
}

}  // namespace
}  // namespace samebits::harness::report
