// `samebits export [RUN...] -o FILE`: writes stored runs as a bundle
// (harness/exchange/bundle.h) to carry to another machine's store.
#include <cstdio>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/exchange/bundle.h"

namespace samebits::cli {
namespace {

struct ExportFlags {
  std::vector<std::string> runs;
  std::string output;
  std::string db;
};

int Export(const ExportFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.db);
  std::vector<harness::RunResult> runs;
  const std::vector<std::string> which =
      flags.runs.empty() ? std::vector<std::string>{"latest"} : flags.runs;
  for (const std::string& w : which) runs.push_back(LoadRunArgument(*store, w));
  exchange::WriteBundle(runs, flags.output);
  std::printf("wrote %zu run%s to %s\n", runs.size(), runs.size() == 1 ? "" : "s",
              DisplayPath(flags.output).c_str());
  return 0;
}

CommandSpec SetupExport(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* sub = app.add_subcommand(
      "export",
      "Writes stored runs (machine, build, math library fingerprints, every cell's steps, "
      "hashes and traces) as one self-describing JSON bundle, for `samebits import` or "
      "`samebits compare` on another machine.");
  sub->add_option("RUN", flags->runs,
                  "The runs to export: ids from `samebits runs`, or latest (the default).")
      ->type_name("RUN");
  sub->add_option("-o,--output", flags->output,
                  "Writes the bundle to this file (through a temporary file renamed over it).")
      ->type_name("FILE")
      ->required();
  sub->add_option("--db", flags->db, "Reads this database instead of .samebits/samebits.db.")
      ->type_name("PATH");
  sub->footer(
      "Exit status: 0 when the bundle was written, 2 when it could not be.\n"
      "Examples:\n"
      "  samebits export -o x86.bundle.json\n"
      "  samebits export 11 12 -o runs.json --db /tmp/experiment.db");
  return {sub, [flags] { return Export(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(export, 70, SetupExport);

}  // namespace samebits::cli
