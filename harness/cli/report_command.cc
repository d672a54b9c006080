// `samebits report RUN`: a stored run as Markdown, HTML, JSON or JUnit XML.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/report/exporter.h"
#include "harness/report/report_formats.h"
#include "harness/store/output_file.h"

namespace samebits::cli {
namespace {

struct ReportCommandFlags {
  std::string run = "latest";
  std::string format;  // empty: from the output file's extension, else md
  std::string output;  // empty: stdout
  std::string db;
};

// Returns the format to write: as given, else the one whose extension the
// output file has (report_formats.h), else Markdown.
std::string ChooseFormat(const ReportCommandFlags& flags) {
  if (!flags.format.empty()) return flags.format;
  const harness::report::ReportFormat* by_extension =
      harness::report::ReportFormatForPath(flags.output);
  return std::string(by_extension != nullptr ? by_extension->name
                                             : harness::report::kReportFormats[0].name);
}

int Report(const ReportCommandFlags& flags) {
  const std::string format = ChooseFormat(flags);
  // Checked before the store is opened, so a typo costs nothing.
  harness::report::MakeExporter(format);
  std::unique_ptr<store::Store> store = OpenStore(flags.db, store::Access::kRead);
  const harness::RunResult run = LoadRunArgument(*store, flags.run);
  harness::report::ReportOptions options;
  options.dump_base_dir = GetPaths().root;  // relative dump paths are the project's
  std::ostringstream text;
  harness::report::WriteReport(run, format, text, options);
  if (flags.output.empty() || flags.output == "-") {
    std::cout << text.str() << std::flush;
  } else {
    store::WriteOutputFile(flags.output, text.str());
    std::fprintf(stderr, "wrote %s\n", flags.output.c_str());
  }
  return 0;
}

CommandSpec SetupReport(CLI::App& app) {
  auto flags = std::make_shared<ReportCommandFlags>();
  CLI::App* sub = app.add_subcommand(
      "report", "Writes a report of a stored run: Markdown, HTML, JSON or JUnit XML.");
  sub->add_option("RUN", flags->run, "The run to report: an id from `samebits runs`, or latest.")
      ->type_name("RUN");
  std::string formats, extensions;
  for (const harness::report::ReportFormat& f : harness::report::kReportFormats) {
    formats += (formats.empty() ? "" : "|") + std::string(f.name);
    extensions +=
        (extensions.empty() ? "." : ", .") + std::string(f.extension) + " " + std::string(f.name);
  }
  sub->add_option("-f,--format", flags->format,
                  "Writes this format; by default the output file's extension decides (" +
                      extensions + "), else " +
                      std::string(harness::report::kReportFormats[0].name) + ".")
      ->type_name(formats);
  Declare(sub->add_option("-o,--output", flags->output,
                          "Writes the report to this file instead of standard output.")
              ->type_name("FILE"),
          PathRole::kOutputFile);
  Declare(AddStoreOption(sub, flags->db, "Reads"), PathRole::kReadStore);
  sub->footer(
      "Examples:\n"
      "  samebits report latest                      # Markdown, for a pull request\n"
      "  samebits report 12 -o reports/run-12.html   # a self-contained page\n"
      "  samebits report latest --format junit -o junit.xml");
  return {sub, [flags] { return Report(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(report, 60, SetupReport);

}  // namespace samebits::cli
