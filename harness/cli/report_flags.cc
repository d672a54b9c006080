#include "harness/cli/report_flags.h"

#include <sstream>

#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/report/exporter.h"
#include "harness/store/output_file.h"

namespace samebits::cli {

void AddReportFlags(CLI::App* sub, ReportFlags& flags, const std::string& what) {
  const auto add = [&](const char* flag, std::string& path, const std::string& kind) {
    Declare(sub->add_option(flag, path, "Writes " + kind + " of " + what + " to this file.")
                ->type_name("FILE"),
            PathRole::kOutputFile);
  };
  add("--report-html", flags.html, "a self-contained HTML report");
  add("--report-md", flags.md, "a Markdown report (for a pull request)");
  add("--report-json", flags.json, "a JSON report");
  add("--report-junit", flags.junit, "a JUnit XML report (for CI systems)");
}

void WriteReports(
    const ReportFlags& flags,
    const std::function<void(const std::string& format, const std::string& path)>& write) {
  const std::pair<const char*, const std::string*> reports[] = {
      {"html", &flags.html}, {"md", &flags.md}, {"json", &flags.json}, {"junit", &flags.junit}};
  for (const auto& [format, path] : reports) {
    if (!path->empty()) write(format, *path);
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
