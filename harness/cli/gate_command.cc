// `samebits gate`: runs the matrix (or takes a stored run), checks it against
// itself and the references, diagnoses any difference, and exits 0 only
// when everything agrees.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

#include "harness/analysis/compare.h"
#include "harness/analysis/judge.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/terminal_text.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/report/exporter.h"
#include "harness/report/report_file.h"
#include "harness/runner/cell_runner.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

struct GateFlags {
  MatrixFlags matrix;
  std::string run;  // a stored run instead of a new one
  bool trace = false;
  bool quiet = false;
  std::string report_html, report_md, report_json, report_junit;
};

// Returns the runnable cell behind a stored or fresh cell result: the
// selected cell of that name when there is one (it knows a suite's scenario
// file and resolved checkpoint), else one made from the scenarios folder.
runner::Cell CellFor(const harness::CellResult& r, const MatrixFlags& flags,
                     const std::vector<runner::Cell>& selected) {
  for (const runner::Cell& c : selected) {
    if (c.checkpoint == r.checkpoint && c.scenario == r.scenario &&
        c.config.name == r.config.name) {
      return c;
    }
  }
  runner::Cell cell;
  cell.checkpoint = r.checkpoint;
  if (r.engine_checkpoint != r.checkpoint) cell.engine_checkpoint = r.engine_checkpoint;
  cell.scenario = r.scenario;
  const std::string dir = flags.scenarios_dir.empty() ? GetPaths().scenarios : flags.scenarios_dir;
  cell.scenario_file = (fs::path(dir) / (r.scenario + ".json")).string();
  for (const std::string& s : flags.scenarios) {
    if (runner::ScenarioName(s) == r.scenario && fs::is_regular_file(s)) cell.scenario_file = s;
  }
  cell.config = r.config;
  return cell;
}

// Returns whether two step sequences are the same outputs (every index and
// hash), so a rerun's dump or trace stands for the stored cell.
bool SameSteps(const std::vector<harness::StepRecord>& a,
               const std::vector<harness::StepRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].index != b[i].index || a[i].xxh3_64 != b[i].xxh3_64 || a[i].fnv1a64 != b[i].fnv1a64)
      return false;
  }
  return true;
}

// Reruns up to four diverging pairs of configurations: with --trace when
// `trace` (to name the first diverging layer and op), and with
// --dump-logits when either cell of the pair has no dump yet (so the report
// gives ULP distances and whether the argmax changed). A rerun's dump
// becomes the cell's `dump_path` only when the rerun printed the same
// outputs as the cell. Returns the trace differences by TraceKey.
std::map<std::string, harness::TraceDifference> RerunDivergences(
    harness::RunResult& run, const GateFlags& flags, const std::vector<runner::Cell>& selected,
    bool trace) {
  std::map<std::string, harness::TraceDifference> out;
  runner::RunnerOptions options;
  options.engine = EnginePath(flags.matrix);
  options.timeout_seconds = flags.matrix.timeout_seconds * (trace ? 4 : 1);  // traces are slower
  options.trace = trace;
  std::set<std::string> done;
  int reruns = 0;
  for (const harness::Divergence& d : run.diagnosis.divergences) {
    const std::string key = harness::TraceKey(d.checkpoint, d.scenario, d.config_a, d.config_b);
    if (done.count(key) != 0 || reruns >= 4) continue;
    harness::CellResult* cells[2] = {nullptr, nullptr};
    for (harness::CellResult& c : run.cells) {
      if (c.checkpoint != d.checkpoint || c.scenario != d.scenario) continue;
      if (c.config.name == d.config_a) cells[0] = &c;
      if (c.config.name == d.config_b) cells[1] = &c;
    }
    if (cells[0] == nullptr || cells[1] == nullptr) continue;  // a reference file, not a cell
    const bool dump = cells[0]->dump_path.empty() || cells[1]->dump_path.empty();
    if (!trace && !dump) continue;
    done.insert(key);
    ++reruns;
    if (dump && options.dump_dir.empty()) options.dump_dir = NewDumpDirectory(flags.matrix);
    if (!flags.quiet) {
      std::fprintf(stderr, "rerunning %s %s: %s and %s (%s)\n", d.checkpoint.c_str(),
                   d.scenario.c_str(), d.config_a.c_str(), d.config_b.c_str(),
                   trace && dump ? "traces, logit dumps"
                   : trace       ? "traces"
                                 : "logit dumps");
    }
    runner::RunnerOptions pair_options = options;
    if (!dump) pair_options.dump_dir.clear();
    harness::CellResult rerun[2];
    auto run_pair = [&] {
      for (int k = 0; k < 2; ++k)
        rerun[k] = runner::RunCell(CellFor(*cells[k], flags.matrix, selected), pair_options);
    };
    run_pair();
    const bool failed =
        rerun[0].code != harness::ResultCode::kPass || rerun[1].code != harness::ResultCode::kPass;
    if (failed && trace && dump) {
      // An engine that cannot dump must still name the diverging layer.
      std::fprintf(stderr, "  the rerun with logit dumps failed; tracing without them\n");
      pair_options.dump_dir.clear();
      run_pair();
    }
    if (rerun[0].code != harness::ResultCode::kPass ||
        rerun[1].code != harness::ResultCode::kPass) {
      std::fprintf(stderr, "  the rerun failed: %s%s\n",
                   harness::TerminalSafe(rerun[0].message).c_str(),
                   harness::TerminalSafe(rerun[1].message).c_str());
      continue;
    }
    if (dump) {
      for (int k = 0; k < 2; ++k) {
        if (rerun[k].dump_path.empty()) {
          std::fprintf(stderr, "  the engine wrote no whole logit dump for %s\n",
                       cells[k]->config.name.c_str());
        } else if (SameSteps(rerun[k].steps, cells[k]->steps)) {
          cells[k]->dump_path = StoredDumpPath(rerun[k].dump_path);
        } else {
          std::fprintf(stderr,
                       "  the rerun of %s printed other outputs than the run (the engine differs "
                       "from run to run); its logit dump is not used\n",
                       cells[k]->config.name.c_str());
        }
      }
    }
    if (!trace) continue;
    for (int k = 0; k < 2; ++k) cells[k]->traces = rerun[k].traces;
    if (auto diff = harness::FirstTraceDifference(rerun[0].traces, rerun[1].traces)) {
      out[key] = *diff;
    }
  }
  // A dump folder in which no rerun kept a dump does not outlive the gate.
  std::error_code ec;
  if (!options.dump_dir.empty()) fs::remove(options.dump_dir, ec);
  return out;
}

void WriteReportFile(const harness::RunResult& run, const std::string& format,
                     const std::string& path) {
  if (path.empty()) return;
  // Relative dump paths are the project root's, as `samebits report` reads them.
  harness::report::ReportOptions options;
  options.dump_base_dir = GetPaths().root;
  std::ostringstream text;
  harness::report::WriteReport(run, format, text, options);
  harness::report::WriteFileAtomically(path, text.str());
}

int Gate(const GateFlags& flags) {
  for (const std::string* report :
       {&flags.report_html, &flags.report_md, &flags.report_json, &flags.report_junit}) {
    harness::report::RefuseOutputOverStore(*report, StorePath(flags.matrix.db));
  }
  const bool fresh = flags.run.empty();
  // Checked before the matrix runs: a store that cannot take the run fails now.
  std::unique_ptr<store::Store> store =
      OpenStore(flags.matrix.db, fresh ? store::Access::kReadWrite : store::Access::kRead);
  harness::RunResult run;
  std::vector<runner::Cell> selected;
  if (fresh) {
    selected = SelectCells(flags.matrix);
    run = RunMatrix(flags.matrix, selected, /*trace=*/false, flags.quiet);
    RefuseUnrunnableSelection(run);
  } else {
    run = LoadRunArgument(*store, flags.run);
    if (run.cells.empty()) throw UsageError("run " + flags.run + " has no cells");
    try {
      // What the flags select now tells reruns where a stored suite cell's
      // scenario and checkpoint files are.
      selected = SelectCells(flags.matrix);
    } catch (const UsageError&) {
    }
  }
  harness::JudgeOptions judge = JudgeOptionsFor(run, flags.matrix);
  harness::Judge(run, judge);
  if (run.diagnosis.kind == harness::Diagnosis::Kind::kIdentityBroken) {
    std::map<std::string, harness::TraceDifference> traced =
        RerunDivergences(run, flags, selected, flags.trace);
    if (flags.trace) {
      judge.trace_differences = std::move(traced);
      judge.traced = true;
      harness::Judge(run, judge);
    }
  }
  if (fresh) run.run_id = store->SaveRun(run);
  std::printf("%s", harness::FormatSummary(run, /*diagnose=*/true).c_str());
  WriteReportFile(run, "html", flags.report_html);
  WriteReportFile(run, "md", flags.report_md);
  WriteReportFile(run, "json", flags.report_json);
  WriteReportFile(run, "junit", flags.report_junit);
  // Nothing checked is a run that could not be made, not a pass.
  if (harness::CountPassing(run) == 0 && run.diagnosis.kind == harness::Diagnosis::Kind::kAllAgree) {
    return 2;
  }
  return harness::GatePasses(run) ? 0 : 1;
}

CommandSpec Setup(CLI::App& app) {
  auto flags = std::make_shared<GateFlags>();
  CLI::App* sub = app.add_subcommand(
      "gate",
      "Runs the matrix (or takes a stored run) and checks that every configuration agrees with "
      "the others and with the committed references; diagnoses any difference.");
  AddMatrixFlags(sub, &flags->matrix);
  AddDumpFlag(sub, &flags->matrix);
  sub->add_option("--run", flags->run,
                  "Judges this stored run (an id, or `latest`) instead of making a new one.")
      ->type_name("ID");
  sub->add_flag("--trace", flags->trace,
                "When configurations disagree, reruns each diverging pair with activation traces "
                "to name the first diverging layer and op. (Without --trace the pairs are still "
                "rerun for raw logit dumps, unless the run has them, so the report gives ULP "
                "distances and whether the argmax changed.)");
  sub->add_flag("-q,--quiet", flags->quiet, "Prints no progress, only the summary.");
  sub->add_option("--report-html", flags->report_html,
                  "Writes a self-contained HTML report of the run to this file.")
      ->type_name("FILE");
  sub->add_option("--report-md", flags->report_md,
                  "Writes a Markdown report (for a pull request) to this file.")
      ->type_name("FILE");
  sub->add_option("--report-json", flags->report_json, "Writes a JSON report to this file.")
      ->type_name("FILE");
  sub->add_option("--report-junit", flags->report_junit,
                  "Writes a JUnit XML report (for CI systems) to this file.")
      ->type_name("FILE");
  sub->footer(
      "Exit codes:\n"
      "  0  every configuration agrees with the others and with the reference\n"
      "  1  they do not, or a child crashed, hung or broke the protocol (the report and\n"
      "     the summary say which and where)\n"
      "  2  the gate could not be carried out: bad arguments, a selection that runs nothing\n"
      "     (no such scenario, or the engine refused every cell: an unknown checkpoint),\n"
      "     an unreadable database or reference\n\n"
      "When configurations disagree, the gate reruns up to four diverging pairs with\n"
      "--dump-logits (and --trace when given), so its reports give ULP distances, whether\n"
      "the argmax changed, and with --trace the first diverging layer and op.\n\n"
      "Examples:\n"
      "  samebits gate --report-html reports/latest.html --report-md reports/latest.md\n"
      "  samebits gate --checkpoint synthetic:tiny --scenario classic --trace\n"
      "  samebits gate --suite scenarios/real/suite.json --config reference,cpu-t2\n"
      "  samebits gate --run latest\n"
      "  git bisect run sh -c 'cmake --build build -j2 || exit 125; build/bin/samebits gate -q'");
  return {sub, [flags] { return Gate(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(gate, 20, Setup);

}  // namespace samebits::cli
