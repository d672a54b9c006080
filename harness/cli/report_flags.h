// The report flags of the commands that report in every format, one
// --report-<name> per format of harness/report/report_formats.h
// (--report-md, --report-html, --report-json, --report-junit): declared
// from that list, as outputs for the output guard, and written in one loop.
#pragma once

#include <CLI/CLI.hpp>
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/report/report_formats.h"

namespace samebits::cli {

// The file each report format goes to, in kReportFormats' order; empty:
// not asked for.
struct ReportFlags {
  std::array<std::string, harness::report::kReportFormats.size()> paths;
};

// Adds a --report-<name> flag per format to `sub` (per format of `formats`,
// a report kind's writers, when given: a card's), each declared
// PathRole::kOutputFile; `what` ends each help text: "Writes a Markdown
// report (for a pull request) of <what> to this file."
void AddReportFlags(CLI::App* sub, ReportFlags& flags, const std::string& what);
void AddReportFlags(CLI::App* sub, ReportFlags& flags, const std::string& what,
                    const std::vector<std::string>& formats);

// Calls `write(format, path)` ("md", "html", "json", "junit") for each
// format given a file, in kReportFormats' order.
void WriteReports(
    const ReportFlags& flags,
    const std::function<void(const std::string& format, const std::string& path)>& write);

// Writes the report of `run` in `format` to `path`, its relative dump paths
// read against the project root (as `samebits report` reads them): the
// reports of `gate` and `verdict`.
void WriteRunReportFile(const harness::RunResult& run, const std::string& format,
                        const std::string& path);

}  // namespace samebits::cli
