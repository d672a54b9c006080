// The four report flags (--report-html, --report-md, --report-json,
// --report-junit) of the commands that report in every format: declared
// once, as outputs for the output guard, and written in one loop.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "harness/analysis/results.h"

namespace samebits::cli {

// The file each report format goes to; empty: not asked for.
struct ReportFlags {
  std::string html, md, json, junit;
};

// Adds the four flags to `sub`, each declared PathRole::kOutputFile; `what`
// ends each help text: "Writes a Markdown report of <what> to this file."
void AddReportFlags(CLI::App* sub, ReportFlags& flags, const std::string& what);

// Calls `write(format, path)` ("html", "md", "json", "junit") for each
// format given a file, in that order.
void WriteReports(
    const ReportFlags& flags,
    const std::function<void(const std::string& format, const std::string& path)>& write);

// Writes the report of `run` in `format` to `path`, its relative dump paths
// read against the project root (as `samebits report` reads them): the
// reports of `gate` and `verdict`.
void WriteRunReportFile(const harness::RunResult& run, const std::string& format,
                        const std::string& path);

}  // namespace samebits::cli
