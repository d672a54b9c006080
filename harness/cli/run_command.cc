// `samebits run`: runs the matrix and stores everything.
#include <cstdio>
#include <memory>

#include "harness/analysis/judge.h"
#include "harness/analysis/summary.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/cli/run_timing.h"
#include "harness/runner/scheduler.h"
#include "harness/runner/unavailable.h"
#include "harness/runner/unstored_run.h"

namespace samebits::cli {
namespace {

struct RunFlags {
  MatrixFlags matrix;
  bool list = false;
  bool trace = false;
  bool quiet = false;
  bool verbose = false;
};

int Run(const RunFlags& flags) {
  const runner::MatrixRunOptions options = RunOptionsFor(flags.matrix);
  std::vector<std::string> left_out;  // what the engine can never run here
  const std::vector<runner::Cell> cells = runner::SelectRunnableCells(options, &left_out);
  if (flags.list) {
    for (const runner::Cell& c : cells) {
      std::printf("%s%s%s\n", runner::CellLabel(c).c_str(), c.supported ? "" : "  (UNSUPPORTED: ",
                  c.supported ? "" : (c.unsupported_reason + ")").c_str());
    }
    for (const std::string& note : left_out) std::printf("%s\n", note.c_str());
    return 0;
  }
  std::unique_ptr<store::Store> store = OpenStore(flags.matrix.db);
  harness::RunResult run = runner::RunMatrix(options, cells, flags.trace, flags.quiet);
  // Until the store has the run, any way out removes its dumps.
  runner::UnstoredRunFiles unstored(run, options.selection.root);
  runner::RefuseUnrunnableSelection(run);
  harness::JudgeOptions judge = JudgeOptionsFor(run, flags.matrix);
  Judge(run, judge);
  run.run_id = SaveRunTimed(*store, run);
  unstored.Stored();
  std::printf("%s", harness::FormatSummary(run, /*diagnose=*/false).c_str());
  for (const std::string& note : left_out) std::printf("%s\n", note.c_str());
  PrintTimeSplit(run, flags.verbose);
  for (const harness::CellResult& c : run.cells) {
    if (harness::IsFailure(c.code)) return 1;
  }
  return 0;
}

CommandSpec SetupRun(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "Runs checkpoints x scenarios x configurations, each cell as a child process of the "
      "engine, and stores every output's hashes in the database.");
  AddMatrixFlags(sub, &flags->matrix);
  AddDumpFlag(sub, &flags->matrix);
  AddMachineNameFlag(sub, &flags->matrix);
  RequireExistingReferencesDir(sub);
  sub->add_flag("--list", flags->list, "Prints the selected cells without running them.");
  sub->add_flag("--trace", flags->trace,
                "Asks every child for activation traces (slow; stored with the run).");
  sub->add_flag("-q,--quiet", flags->quiet, "Prints no progress, only the summary.");
  AddVerboseFlag(sub, &flags->verbose);
  sub->footer(
      "Configurations: reference; cpu-tN for each --threads N; cpu-tMAX-chunk8k (8 KiB GEMV\n"
      "chunks); cpu-scalar, cpu-avx2, cpu-avx512, cpu-neon (UNSUPPORTED where the machine\n"
      "lacks the ISA). With --math portable,libm each appears once per profile (-libm suffix),\n"
      "and with --quant-dot exact,int8 once per dot-product profile (-int8 suffix, after any\n"
      "-libm: cpu-t2-libm-int8).\n\n"
      "Examples:\n"
      "  samebits run\n"
      "  samebits run --checkpoint synthetic:tiny --scenario classic --config reference,cpu-t3\n"
      "  samebits run --threads 1,2,4 --math portable,libm -j 2 --timeout 30\n"
      "  samebits run --checkpoint synthetic:tiny-q4_0 --quant-dot exact,int8\n"
      "  samebits run --engine ./my-engine --db /tmp/experiment.db --list\n"
      "  samebits run --checkpoint synthetic:tiny --dump-logits && samebits report latest");
  return {sub, [flags] { return Run(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(run, 10, SetupRun);

}  // namespace samebits::cli
