// `samebits conform A B`: how close run B's logits are to run A's, per step,
// with stated tolerances (harness/analysis/run_conformance.h): the
// comparison across engines, where bit identity is not expected. A and B
// are each a run id in the store, a database file (its latest run), a
// bundle file (its last run), or an engine profile (`engine:NAME`, run here
// on --checkpoint x --scenario: conform_engines.h); each side's cells need
// raw logit dumps.
#include <cstdio>
#include <memory>
#include <sstream>

#include "harness/analysis/run_conformance.h"
#include "harness/cli/checkpoint_flags.h"
#include "harness/cli/commands.h"
#include "harness/cli/conform_engines.h"
#include "harness/cli/engine_choice.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/report_flags.h"
#include "harness/cli/run_operand.h"
#include "harness/cli/scenario_file.h"
#include "harness/report/conformance_report.h"
#include "harness/runner/temp_folder.h"
#include "harness/store/output_file.h"

namespace samebits::cli {
namespace {

struct ConformFlags {
  std::string a, b;
  std::string db;
  std::string config_a, config_b;
  double max_nmse = harness::ConformanceThreshold{}.max_nmse;
  std::vector<std::string> checkpoints;
  std::vector<std::string> scenarios = {"classic"};
  double timeout_seconds = 120;
  bool build = false;
  ReportFlags reports;
};

void WriteReportFile(const harness::RunConformance& c, const std::string& format,
                     const std::string& path) {
  std::ostringstream out;
  harness::report::WriteConformanceReport(c, format, out);
  store::WriteOutputFile(path, out.str());
}

// The engine operands' engines, each asked with its profile's probe.
std::vector<runner::EngineToAsk> CheckpointEnginesOf(const ConformFlags& flags) {
  std::vector<runner::EngineToAsk> engines;
  for (const auto& [which, config] :
       {std::pair{flags.a, flags.config_a}, {flags.b, flags.config_b}}) {
    if (const std::optional<EngineOperand> e = ParseEngineOperand(which, config, flags.build)) {
      engines.push_back({e->program, e->profile->probe});
    }
  }
  return engines;
}

int Conform(const ConformFlags& flags) {
  const std::optional<EngineOperand> engine_a =
      ParseEngineOperand(flags.a, flags.config_a, flags.build);
  const std::optional<EngineOperand> engine_b =
      ParseEngineOperand(flags.b, flags.config_b, flags.build);
  if (flags.build && !engine_a && !engine_b) {
    throw UsageError("--build is for engine operands (engine:NAME): nothing to build");
  }
  if ((engine_a || engine_b) && flags.checkpoints.empty()) {
    throw UsageError("an engine operand needs --checkpoint: the checkpoints to run it on");
  }
  if (!engine_a && !engine_b && !flags.checkpoints.empty()) {
    throw UsageError(
        "--checkpoint is for engine operands (engine:NAME); stored runs are "
        "measured on the checkpoints they ran");
  }
  std::optional<runner::TempFolder> dumps;  // the engines' logit dumps
  EngineRunOptions run;
  if (engine_a || engine_b) {
    dumps.emplace("samebits-conform");
    if (dumps->path().empty()) throw UsageError("cannot make a temporary folder");
    run.checkpoints = flags.checkpoints;
    for (const std::string& s : flags.scenarios) run.scenario_files.push_back(ScenarioFile(s));
    run.timeout_seconds = flags.timeout_seconds;
    run.dump_dir = dumps->path();
  }
  const auto side = [&](const std::string& which, const std::optional<EngineOperand>& engine,
                        const char* name) {
    if (!engine) return LoadRunOperand(which, flags.db);
    return RunOperand{RunEngineOperand(*engine, run, name), engine->label};
  };
  const RunOperand a = side(flags.a, engine_a, "a");
  const RunOperand b = side(flags.b, engine_b, "b");
  harness::ConformOptions options;
  options.threshold.max_nmse = flags.max_nmse;
  // An engine's cells are named by its configuration, chosen above.
  options.config_a = engine_a ? engine_a->config.name : flags.config_a;
  options.config_b = engine_b ? engine_b->config.name : flags.config_b;
  options.dump_base_dir = GetPaths().root;  // dump paths are stored relative to it
  if (engine_b) options.rerun_b_forced = ForcedRerunOf(*engine_b, run);
  const harness::RunConformance c = harness::ConformRuns(a.run, b.run, a.label, b.label, options);
  std::printf("%s", harness::FormatConformance(c).c_str());
  WriteReports(flags.reports, [&](const std::string& format, const std::string& path) {
    WriteReportFile(c, format, path);
  });
  return c.ExitCode();
}

CommandSpec SetupConform(CLI::App& app) {
  auto flags = std::make_shared<ConformFlags>();
  CLI::App* sub = app.add_subcommand(
      "conform",
      "Measures how close run B's logits are to run A's (the reference), step by step, for "
      "each checkpoint and scenario both ran: NMSE, KL divergence of the softmax "
      "distributions, Δp of A's top-1 token, top-1 agreement, top-5 overlap, max |a - b|, ULP "
      "percentiles and the top-1/top-2 margin (each step stable, fragile or unstable), every "
      "mean over the steps with its standard error, judged against a threshold (CONFORMS or "
      "DEVIATES with the first deviating step, token and metric). "
      "For engines that do not share samebits' order of operations, where bits are not "
      "expected to agree; within one engine use `samebits compare`.");
  AddRunOperands(sub, flags->a, flags->b, flags->db, /*engines=*/true);
  sub->add_option("--config-a", flags->config_a,
                  "The configuration of A to measure against (default: the first that passed "
                  "with a logit dump, for each checkpoint and scenario; for an engine, the "
                  "configuration to run, default its profile's baseline).")
      ->type_name("NAME");
  sub->add_option("--config-b", flags->config_b,
                  "The configuration of B to measure (default: A's configuration when B has "
                  "one of that name, else B's first that passed with a logit dump; for an "
                  "engine, the configuration to run, default its profile's baseline).")
      ->type_name("NAME");
  DeclareCheckpoints(sub->add_option("--checkpoint", flags->checkpoints,
                                     "For engine operands: the checkpoints to run them on, as the "
                                     "engines take them (synthetic:tiny, gguf:PATH, ...). A file "
                                     "that is not there, or a synthetic checkpoint an engine "
                                     "says it does not know, is refused before anything runs.")
                         ->type_name("SPEC")
                         ->delimiter(','),
                     [flags] { return CheckpointEnginesOf(*flags); });
  Declare(sub->add_option("--scenario", flags->scenarios,
                          "For engine operands: the scenarios to run, names from the scenarios "
                          "folder or paths to JSON files (default: classic).")
              ->type_name("NAME|FILE")
              ->delimiter(','),
          PathRole::kInput);
  AddBuildFlag(sub, &flags->build);
  sub->add_option("--timeout", flags->timeout_seconds,
                  "For engine operands: kills a child that runs longer than this many seconds "
                  "(default: 120).")
      ->type_name("SECONDS")
      ->check(SecondsInRange(86400));
  sub->add_option("--max-nmse", flags->max_nmse,
                  "The largest NMSE a step may have and conform (default: 1e-4, the limit "
                  "llama.cpp's test-llama-archs uses).")
      ->type_name("X")
      ->check(FiniteNonNegativeNumber());
  AddReportFlags(sub, flags->reports, "the measurements");
  sub->footer(
      "Per step: NMSE = sum (a - b)^2 / sum a^2 (A's row is the denominator, as in\n"
      "llama.cpp's test-backend-ops); KL(P_A || P_B) of the softmax distributions in nats,\n"
      "computed in double (mean, median, p99, p99.9 and max over the steps, as\n"
      "llama-perplexity --kl-divergence reports it); Δp = p_B - p_A of A's top-1 token\n"
      "(mean and RMS); top-1 (ties to the lower id) and top-5 overlap. Every mean over the\n"
      "steps is given ± its standard error (sample standard deviation / sqrt(n); RMS Δp's\n"
      "by the delta method, se(Δp^2) / (2 RMS); same top-1 ± sqrt(p (1 - p) / n)).\n"
      "A step is fragile when |a - b| at A's two largest logits adds up to at least their\n"
      "margin, unstable when the argmax moved; a pair is its worst step's, and the verdict\n"
      "says which. A step deviates when its NMSE exceeds --max-nmse or a value is\n"
      "non-finite on one side only; DEVIATES names the first such step, its token (the\n"
      "largest |a - b|, or the non-finite one) and the metric.\n\n"
      "Logits of two different contexts are never compared: where the two greedy\n"
      "continuations diverge (a step fed a different token), B is rerun with A's tokens\n"
      "forced (each decode fed A's token as a single-token extend) when B is an engine\n"
      "(engine:NAME), and the whole pair is measured on that rerun; for stored B, the\n"
      "comparison of that pair stops there and says so. Stored runs need raw logit dumps:\n"
      "run them with --dump-logits.\n\n"
      "Exit codes:\n"
      "  0  every compared pair conforms\n"
      "  1  a compared pair deviates\n"
      "  2  nothing could be compared, or a run, database, bundle or dump is unreadable\n\n"
      "Examples:\n"
      "  samebits conform 11 12 --config-a reference --config-b cpu-t2\n"
      "  samebits conform ours.bundle.json theirs.bundle.json --report-md conform.md\n"
      "  samebits conform engine:samebits engine:llama.cpp --config-a reference \\\n"
      "      --checkpoint gguf:model.gguf --scenario classic,window");
  return {sub, [flags] { return Conform(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(conform, 67, SetupConform);

}  // namespace samebits::cli
