// Reports of a run: one exporter interface, one file per format
// (markdown_exporter.cc, html_exporter.cc, json_exporter.cc,
// junit_exporter.cc). Each format formats the same `ReportModel`, so they
// agree on what happened; every string from outside is escaped for its
// format (harness/report/escape.h).
//
// Adding a format touches three files: its row in report_formats.h's list
// (name, extension, what its --report-<name> flag writes), a new
// <name>_exporter.cc defining `std::unique_ptr<Exporter> Make<Name>Exporter()`,
// and one row in the table kFormats in exporter.cc (which declares the
// factory); the conformance reports' table must then have it too.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/report/report_model.h"

namespace samebits::harness::report {

class Exporter {
 public:
  virtual ~Exporter() = default;
  // Writes the report of `model` to `out`.
  virtual void Write(const ReportModel& model, std::ostream& out) const = 0;
};

// Returns the exporter for `format` ("md" or "markdown", "html", "json",
// "junit"). Throws std::invalid_argument naming the format and the known ones.
std::unique_ptr<Exporter> MakeExporter(std::string_view format);

// Returns the known format names, in the order `--format` documents them.
std::vector<std::string> ReportFormats();

// Writes the report of `run` in `format` to `out`. Throws
// std::invalid_argument for an unknown format.
void WriteReport(const RunResult& run, std::string_view format, std::ostream& out);
void WriteReport(const RunResult& run, std::string_view format, std::ostream& out,
                 const ReportOptions& options);

}  // namespace samebits::harness::report
