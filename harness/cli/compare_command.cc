// `samebits compare A B`: compares two runs, typically from two machines or
// two builds, cell by cell, and says for each difference what most likely
// caused it (harness/analysis/run_compare.h). A and B are each a run id in
// the store, machine:NAME (that machine's newest run in the store), a
// database file (its latest run) or a bundle file (its last run).
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "harness/analysis/run_compare.h"
#include "harness/cli/commands.h"
#include "harness/cli/key_file.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/report_flags.h"
#include "harness/cli/run_operand.h"
#include "harness/exchange/bundle.h"
#include "harness/exchange/bundle_signature.h"
#include "harness/report/exporter.h"
#include "harness/store/output_file.h"

namespace samebits::cli {
namespace {

struct CompareFlags {
  std::string a, b;
  std::string db;
  std::string verify;  // a key file: bundles must be signed with it
  ReportFlags reports;
};

void WriteReportFile(const harness::RunResult& run, const std::string& format,
                     const std::string& path) {
  std::ostringstream out;
  harness::report::ReportOptions options;
  options.read_dumps = false;  // the logits are in each difference's detail already
  harness::report::WriteReport(run, format, out, options);
  store::WriteOutputFile(path, out.str());
}

int Compare(const CompareFlags& flags) {
  const std::optional<exchange::BundleKey> key = ReadKeyFile(flags.verify);
  const RunOperand a = LoadRunOperand(flags.a, flags.db, key ? &*key : nullptr);
  const RunOperand b = LoadRunOperand(flags.b, flags.db, key ? &*key : nullptr);
  harness::CompareOptions options;
  options.dump_base_dir = GetPaths().root;  // dump paths are stored relative to it
  const harness::RunComparison cmp = harness::CompareRuns(a.run, b.run, a.label, b.label, options);
  std::printf("%s", harness::FormatComparison(cmp).c_str());
  const harness::RunResult as_run = harness::ComparisonAsRun(cmp, a.run);
  WriteReports(flags.reports, [&](const std::string& format, const std::string& path) {
    WriteReportFile(as_run, format, path);
  });
  return cmp.ExitCode();
}

CommandSpec SetupCompare(CLI::App& app) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Compares two runs (say, of two machines) cell by cell: which agree bit for bit, where "
      "each difference first appears (step, and layer and op when both stored traces), how "
      "far apart the logits of that step are (when both sides have raw logit dumps), and "
      "its most likely cause: the code, the compiler or flags, the ISA, the math library or "
      "the architecture.");
  AddRunOperands(sub, flags->a, flags->b, flags->db);
  Declare(sub->add_option("--verify", flags->verify,
                          "Compares a bundle only when it is signed with this key file (see "
                          "`samebits export --sign`) and unchanged since; a database file is "
                          "then refused, a run id names this store's own run.")
              ->type_name("KEYFILE"),
          PathRole::kInput);
  AddReportFlags(sub, flags->reports, "the comparison");
  sub->footer(
      "Cells that did not run on both sides (UNSUPPORTED, crashed, or missing from one run)\n"
      "are reported as not compared, never as identical. Where both sides of a difference\n"
      "have raw logit dumps (dump files, or rows a bundle carried), the first differing step's\n"
      "ULP statistics are shown (\"max 3 ulp, 1 of 256 values differ\"); where a side has only\n"
      "a bundle's dump statistics, the two argmaxes and max |logit| values.\n\n"
      "Exit codes:\n"
      "  0  every compared cell agrees bit for bit\n"
      "  1  a compared cell differs\n"
      "  2  the comparison could not be made: an unreadable run, database or bundle, or no\n"
      "     cell ran on both sides\n\n"
      "Examples:\n"
      "  samebits compare x86.bundle.json arm64.bundle.json --report-md compare.md\n"
      "  samebits compare 11 latest\n"
      "  samebits compare machine:ci-x86-64 machine:ci-arm64 --db postgresql://ci@db/samebits\n"
      "  samebits compare .samebits/samebits.db /tmp/other-machine.db");
  return {sub, [flags] { return Compare(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(compare, 66, SetupCompare);

}  // namespace samebits::cli
