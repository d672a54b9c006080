#include "harness/report/exporter.h"

#include <ostream>
#include <stdexcept>

namespace samebits::harness::report {

std::vector<std::string> ReportFormats() {
  return {"md", "html", "json", "junit"};
}

std::unique_ptr<Exporter> MakeExporter(std::string_view format) {
  if (format == "md" || format == "markdown") return MakeMarkdownExporter();
  if (format == "html") return MakeHtmlExporter();
  if (format == "json") return MakeJsonExporter();
  if (format == "junit") return MakeJunitExporter();
  std::string known;
  for (const std::string& f : ReportFormats()) known += (known.empty() ? "" : ", ") + f;
  throw std::invalid_argument("unknown report format '" + std::string(format) +
                              "' (known formats: " + known + ")");
}

void WriteReport(const RunResult& run, std::string_view format, std::ostream& out,
                 const ReportOptions& options) {
  // The exporter is chosen before any work so an unknown format fails fast.
  const std::unique_ptr<Exporter> exporter = MakeExporter(format);
  exporter->Write(BuildReportModel(run, options), out);
}

void WriteReport(const RunResult& run, std::string_view format, std::ostream& out) {
  WriteReport(run, format, out, ReportOptions{});
}

}  // namespace samebits::harness::report
