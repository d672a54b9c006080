// The table of report formats (exporter.h).
#include "harness/report/exporter.h"

#include <iterator>
#include <ostream>

#include "harness/report/report_formats.h"

namespace samebits::harness::report {

// Each format's factory, defined in its <name>_exporter.cc.
std::unique_ptr<Exporter> MakeMarkdownExporter();
std::unique_ptr<Exporter> MakeHtmlExporter();
std::unique_ptr<Exporter> MakeJsonExporter();
std::unique_ptr<Exporter> MakeJunitExporter();

namespace {

struct RunFormat {
  std::string_view name;  // a name of report_formats.h's list
  std::unique_ptr<Exporter> (*make)();
};

// Every format of the list (report_formats.h), in its order.
constexpr RunFormat kRunFormats[] = {
    {"md", MakeMarkdownExporter},
    {"html", MakeHtmlExporter},
    {"json", MakeJsonExporter},
    {"junit", MakeJunitExporter},
};
static_assert(FormatsAreListed(kRunFormats) && std::size(kRunFormats) == kReportFormats.size(),
              "a run's report is written in every format of report_formats.h");

}  // namespace

std::vector<std::string> ReportFormats() {
  std::vector<std::string> names;
  for (const RunFormat& f : kRunFormats) names.emplace_back(f.name);
  return names;
}

std::unique_ptr<Exporter> MakeExporter(std::string_view format) {
  return FindFormatRow(kRunFormats, format).make();
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
