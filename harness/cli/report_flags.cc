#include "harness/cli/report_flags.h"

#include <algorithm>
#include <cstddef>
#include <sstream>

#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/report/exporter.h"
#include "harness/store/output_file.h"

namespace samebits::cli {

void AddReportFlags(CLI::App* sub, ReportFlags& flags, const std::string& what) {
  std::vector<std::string> every;
  every.reserve(harness::report::kReportFormats.size());
  for (const harness::report::ReportFormat& f : harness::report::kReportFormats) {
    every.emplace_back(f.name);
  }
  AddReportFlags(sub, flags, what, every);
}

void AddReportFlags(CLI::App* sub, ReportFlags& flags, const std::string& what,
                    const std::vector<std::string>& formats) {
  for (std::size_t i = 0; i < harness::report::kReportFormats.size(); ++i) {
    const harness::report::ReportFormat& format = harness::report::kReportFormats[i];
    if (std::find(formats.begin(), formats.end(), format.name) == formats.end()) continue;
    Declare(sub->add_option(
                   "--report-" + std::string(format.name), flags.paths[i],
                   "Writes " + std::string(format.description) + " of " + what + " to this file.")
                ->type_name("FILE"),
            PathRole::kOutputFile);
  }
}

void WriteReports(
    const ReportFlags& flags,
    const std::function<void(const std::string& format, const std::string& path)>& write) {
  for (std::size_t i = 0; i < harness::report::kReportFormats.size(); ++i) {
    if (!flags.paths[i].empty()) {
      write(std::string(harness::report::kReportFormats[i].name), flags.paths[i]);
    }
  }
}

void WriteRunReportFile(const harness::RunResult& run, const std::string& format,
                        const std::string& path) {
  harness::report::ReportOptions options;
  options.dump_base_dir = GetPaths().root;
  std::ostringstream text;
  harness::report::WriteReport(run, format, text, options);
  store::WriteOutputFile(path, text.str());
}

}  // namespace samebits::cli
