// The table of report formats (exporter.h).
#include "harness/report/exporter.h"

#include <ostream>
#include <stdexcept>

namespace samebits::harness::report {

// Each format's factory, defined in its <name>_exporter.cc.
std::unique_ptr<Exporter> MakeMarkdownExporter();
std::unique_ptr<Exporter> MakeHtmlExporter();
std::unique_ptr<Exporter> MakeJsonExporter();
std::unique_ptr<Exporter> MakeJunitExporter();

namespace {

struct Format {
  const char* name;   // as given to `--format`
  const char* alias;  // another accepted name, or nullptr
  std::unique_ptr<Exporter> (*make)();
};

// Every format, in the order `--format` documents them.
constexpr Format kFormats[] = {
    {"md", "markdown", MakeMarkdownExporter},
    {"html", nullptr, MakeHtmlExporter},
    {"json", nullptr, MakeJsonExporter},
    {"junit", nullptr, MakeJunitExporter},
};

}  // namespace

std::vector<std::string> ReportFormats() {
  std::vector<std::string> names;
  for (const Format& f : kFormats) names.push_back(f.name);
  return names;
}

std::unique_ptr<Exporter> MakeExporter(std::string_view format) {
  for (const Format& f : kFormats) {
    if (format == f.name || (f.alias != nullptr && format == f.alias)) return f.make();
  }
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
