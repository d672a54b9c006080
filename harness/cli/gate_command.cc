// `samebits gate`: runs the matrix (or takes a stored run), checks it against
// itself and the references, diagnoses any difference, and exits 0 only
// when everything agrees.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "harness/analysis/compare.h"
#include "harness/analysis/judge.h"
#include "harness/analysis/summary.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/report/exporter.h"
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

// Returns the runnable cell behind a stored or fresh cell result.
runner::Cell CellFor(const harness::CellResult& r, const MatrixFlags& flags) {
  runner::Cell cell;
  cell.checkpoint = r.checkpoint;
  cell.scenario = r.scenario;
  const std::string dir = flags.scenarios_dir.empty() ? GetPaths().scenarios : flags.scenarios_dir;
  cell.scenario_file = (fs::path(dir) / (r.scenario + ".json")).string();
  for (const std::string& s : flags.scenarios) {
    if (runner::ScenarioName(s) == r.scenario && fs::is_regular_file(s)) cell.scenario_file = s;
  }
  cell.config = r.config;
  return cell;
}

// Reruns each diverging pair of configurations with --trace and records
// where their traces first differ. Returns the differences by TraceKey.
std::map<std::string, harness::TraceDifference> TraceDivergences(harness::RunResult& run,
                                                                 const GateFlags& flags) {
  std::map<std::string, harness::TraceDifference> out;
  runner::RunnerOptions options;
  options.engine = EnginePath(flags.matrix);
  options.timeout_seconds = flags.matrix.timeout_seconds * 4;  // traces are slower
  options.trace = true;
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
    done.insert(key);
    ++reruns;
    if (!flags.quiet) {
      std::fprintf(stderr, "tracing %s %s: %s and %s\n", d.checkpoint.c_str(), d.scenario.c_str(),
                   d.config_a.c_str(), d.config_b.c_str());
    }
    harness::CellResult traced[2];
    for (int k = 0; k < 2; ++k)
      traced[k] = runner::RunCell(CellFor(*cells[k], flags.matrix), options);
    if (traced[0].code != harness::ResultCode::kPass ||
        traced[1].code != harness::ResultCode::kPass) {
      std::fprintf(stderr, "  the traced rerun failed: %s%s\n", traced[0].message.c_str(),
                   traced[1].message.c_str());
      continue;
    }
    for (int k = 0; k < 2; ++k) cells[k]->traces = traced[k].traces;
    if (auto diff = harness::FirstTraceDifference(traced[0].traces, traced[1].traces)) {
      out[key] = *diff;
    }
  }
  return out;
}

void WriteReportFile(const harness::RunResult& run, const std::string& format,
                     const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UsageError("cannot write the report " + path);
  harness::report::WriteReport(run, format, out);
  out.close();
  if (!out) throw UsageError("cannot write the report " + path);
}

int Gate(const GateFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.matrix.db);
  harness::RunResult run;
  const bool fresh = flags.run.empty();
  if (fresh) {
    const std::vector<runner::Cell> cells = SelectCells(flags.matrix);
    run = RunMatrix(flags.matrix, cells, /*trace=*/false, flags.quiet);
  } else {
    run = LoadRunArgument(*store, flags.run);
    if (run.cells.empty()) throw UsageError("run " + flags.run + " has no cells");
  }
  harness::JudgeOptions judge;
  judge.references_dir = DisplayPath(ReferencesDir(flags.matrix));
  judge.references = LoadReferencesFor(run, ReferencesDir(flags.matrix));
  judge.samebits = GetPaths().program_display;
  harness::Judge(run, judge);
  if (flags.trace && run.diagnosis.kind == harness::Diagnosis::Kind::kIdentityBroken) {
    judge.trace_differences = TraceDivergences(run, flags);
    judge.traced = true;
    harness::Judge(run, judge);
  }
  if (fresh) run.run_id = store->SaveRun(run);
  std::printf("%s", harness::FormatSummary(run, /*diagnose=*/true).c_str());
  WriteReportFile(run, "html", flags.report_html);
  WriteReportFile(run, "md", flags.report_md);
  WriteReportFile(run, "json", flags.report_json);
  WriteReportFile(run, "junit", flags.report_junit);
  return harness::GatePasses(run) ? 0 : 1;
}

CommandSpec Setup(CLI::App& app) {
  auto flags = std::make_shared<GateFlags>();
  CLI::App* sub = app.add_subcommand(
      "gate",
      "Runs the matrix (or takes a stored run) and checks that every configuration agrees with "
      "the others and with the committed references; diagnoses any difference.");
  AddMatrixFlags(sub, &flags->matrix);
  sub->add_option("--run", flags->run,
                  "Judges this stored run (an id, or `latest`) instead of making a new one.")
      ->type_name("ID");
  sub->add_flag("--trace", flags->trace,
                "When configurations disagree, reruns each diverging pair with activation traces "
                "to name the first diverging layer and op.");
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
      "Exit codes: 0 every configuration agrees with the others and with the reference;\n"
      "1 they do not (or a child crashed, hung or broke the protocol); 2 the run could not\n"
      "be made.\n\n"
      "Examples:\n"
      "  samebits gate --report-html reports/latest.html --report-md reports/latest.md\n"
      "  samebits gate --checkpoint synthetic:tiny --scenario classic --trace\n"
      "  samebits gate --run latest\n"
      "  git bisect run sh -c 'cmake --build build -j2 || exit 125; build/bin/samebits gate -q'");
  return {sub, [flags] { return Gate(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(gate, 20, Setup);

}  // namespace samebits::cli
