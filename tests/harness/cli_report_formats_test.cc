// The report formats are listed once (harness/report/report_formats.h):
// every report kind's writers, every command's --report-<name> flags, the
// extension `samebits report -o FILE` goes by and the "known formats" of an
// error come from that list. These tests hold the commands to it, walked
// over the program's own command list, so a command added later is covered.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/cli/report_flags.h"
#include "harness/report/card_report.h"
#include "harness/report/conformance_report.h"
#include "harness/report/exporter.h"
#include "harness/report/report_formats.h"
#include "tests/harness/program_commands.h"

namespace samebits::cli {
namespace {

using harness::report::FindReportFormat;
using harness::report::kReportFormats;
using harness::report::ReportFormat;
using harness::report::ReportFormatForPath;

constexpr std::string_view kReportFlagPrefix = "report-";

std::set<std::string> ListedNames() {
  std::set<std::string> names;
  for (const ReportFormat& f : kReportFormats) names.emplace(f.name);
  return names;
}

TEST(ReportFormatList, EveryCommandsReportFlagNamesAListedFormat) {
  const std::set<std::string> listed = ListedNames();
  int commands_with_every_format = 0;
  const ProgramCommands program;
  for (const Command& command : program.all()) {
    std::set<std::string> formats;
    for (const CLI::Option* option : command.app->get_options()) {
      for (const std::string& name : option->get_lnames()) {
        if (name.rfind(kReportFlagPrefix, 0) != 0) continue;
        const std::string format = name.substr(kReportFlagPrefix.size());
        EXPECT_TRUE(listed.count(format) != 0)
            << command.Name() << " --" << name << " names no format of report_formats.h";
        formats.insert(format);
      }
    }
    // A command that writes more than one format writes every format of
    // its report kind: its flags come from AddReportFlags, not from a list
    // of its own.
    const std::vector<std::string> card = harness::report::CardReportFormats();
    if (formats.size() > 1) {
      EXPECT_TRUE(formats == listed || formats == std::set<std::string>(card.begin(), card.end()))
          << command.Name() << " writes some report formats, not those of a report kind";
      commands_with_every_format += formats == listed ? 1 : 0;
    }
  }
  // gate, verdict, compare and conform at least; a walk that found none
  // would pass by looking at nothing.
  EXPECT_GE(commands_with_every_format, 4);
}

TEST(ReportFormatList, TheFlagsAreWrittenInTheListsOrder) {
  CLI::App app;
  ReportFlags flags;
  AddReportFlags(&app, flags, "the run");
  app.parse(std::vector<std::string>{"b.xml", "--report-junit", "a.md", "--report-md"});
  std::vector<std::pair<std::string, std::string>> written;
  WriteReports(flags, [&](const std::string& format, const std::string& path) {
    written.emplace_back(format, path);
  });
  EXPECT_EQ(written,
            (std::vector<std::pair<std::string, std::string>>{{"md", "a.md"}, {"junit", "b.xml"}}));
}

TEST(ReportFormatList, EveryFormatHasARunAndAConformanceWriterByNameAndAlias) {
  for (const ReportFormat& f : kReportFormats) {
    EXPECT_NO_THROW(harness::report::MakeExporter(f.name)) << f.name;
    EXPECT_NO_THROW(harness::report::MakeConformanceExporter(f.name)) << f.name;
    if (!f.alias.empty()) {
      EXPECT_NO_THROW(harness::report::MakeExporter(f.alias)) << f.alias;
      EXPECT_NO_THROW(harness::report::MakeConformanceExporter(f.alias)) << f.alias;
    }
  }
  std::vector<std::string> names;
  for (const ReportFormat& f : kReportFormats) names.emplace_back(f.name);
  EXPECT_EQ(harness::report::ReportFormats(), names);
}

TEST(ReportFormatList, AnUnknownFormatNamesTheFormatsOfItsKind) {
  try {
    harness::report::MakeExporter("pdf");
    ADD_FAILURE() << "pdf was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown report format 'pdf' (known formats: md, html, json, junit)");
  }
  // A card is written in two of the formats; asking it for a third names those two.
  std::ostringstream out;
  try {
    harness::report::WriteCardReport(harness::Card{}, "json", out);
    ADD_FAILURE() << "a card was written as JSON";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown report format 'json' (known formats: md, html)");
  }
  EXPECT_TRUE(out.str().empty());
  for (const std::string& format : harness::report::CardReportFormats()) {
    EXPECT_NE(FindReportFormat(format), nullptr) << format;
  }
}

TEST(ReportFormatList, TheOutputFilesExtensionChoosesTheFormat) {
  for (const ReportFormat& f : kReportFormats) {
    const ReportFormat* chosen = ReportFormatForPath("out/report." + std::string(f.extension));
    ASSERT_NE(chosen, nullptr) << f.extension;
    EXPECT_EQ(chosen->name, f.name);
  }
  EXPECT_EQ(ReportFormatForPath("report.htm")->name, "html");
  EXPECT_EQ(ReportFormatForPath("report.pdf"), nullptr);
  EXPECT_EQ(ReportFormatForPath("report"), nullptr);
  EXPECT_EQ(ReportFormatForPath("reports.d/report"), nullptr);
  EXPECT_EQ(ReportFormatForPath(""), nullptr);
}

}  // namespace
}  // namespace samebits::cli
