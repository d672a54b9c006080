// The Markdown report: short enough for a pull-request comment. It leads
// with the verdict and the diagnosis (what a reviewer needs), then counts,
// failing cells with their first divergence, ULP statistics when dumps
// exist, small agreement matrices, and the machine. Long matrices and stderr
// tails are cut or folded so the comment stays readable.
#include <ostream>
#include <string>

#include "harness/report/escape.h"
#include "harness/report/exporter.h"
#include "harness/report/run_grid.h"

namespace samebits::harness::report {
namespace {

// A matrix wider than this many steps is left to the HTML report.
constexpr size_t kMaxMatrixColumns = 24;
// At most this many configurations per matrix.
constexpr size_t kMaxMatrixRows = 8;
// At most this many configurations in the grid.
constexpr size_t kMaxGridRows = 120;
// At most this many failing cells in the table.
constexpr size_t kMaxFailingRows = 50;

const char* AgreementSymbol(Agreement a) {
  switch (a) {
    case Agreement::kSame:
      return "=";
    case Agreement::kDiffers:
      return "**X**";
    case Agreement::kMissing:
      return "-";
  }
  return "?";
}

void WriteHeadline(const ReportModel& m, std::ostream& out) {
  const RunResult& run = *m.run;
  out << "## samebits run " << run.run_id << ": " << (m.passed ? "PASS" : "FAIL") << "\n\n";
  out << "Started " << MarkdownCell(run.started_at) << ", " << run.cells.size() << " cells, "
      << FormatMs(run.elapsed_ms) << " ms.";
  if (!run.command.empty()) out << " Command: " << MarkdownCell(run.command);
  out << "\n\n";
  out << "**" << DiagnosisKindTitle(run.diagnosis.kind) << ":** "
      << MarkdownCell(run.diagnosis.headline) << "\n\n";
  // The details already roll the divergences up (one line per pair of
  // configurations); each cell's own first divergence is in the cells table.
  for (const std::string& d : run.diagnosis.details) out << "- " << MarkdownCell(d) << "\n";
  if (!run.diagnosis.details.empty()) out << "\n";
}

void WriteCounts(const ReportModel& m, std::ostream& out) {
  out << "| Result | Cells |\n|---|---:|\n";
  for (size_t i = 0; i < kAllResultCodes.size(); ++i) {
    if (m.counts[i] == 0) continue;
    out << "| " << ResultCodeName(kAllResultCodes[i]) << " | " << m.counts[i] << " |\n";
  }
  out << "\n";
}

// The grid: a row per configuration, a column per checkpoint, the worst
// mark of each pair (run_grid.h), with the machine and build above it.
void WriteGridMarkdown(const ReportModel& m, std::ostream& out) {
  const RunGrid grid = BuildRunGrid(*m.run);
  if (grid.rows.empty()) return;
  const MachineInfo& mi = m.run->machine;
  out << "### At a glance\n\nMachine: " << MarkdownCell(mi.arch + ", " + mi.cpu) << ".";
  if (const std::string build = RunBuildText(*m.run); !build.empty())
    out << " Engine: " << MarkdownCell(build) << ".";
  for (const std::string& line : {RunServerText(*m.run), RunReadbackText(*m.run)}) {
    if (!line.empty()) out << " " << MarkdownCell(line);
  }
  out << "\n\n| Configuration |";
  for (const std::string& column : grid.columns) out << " " << MarkdownCell(column) << " |";
  out << "\n|---|";
  for (size_t i = 0; i < grid.columns.size(); ++i) out << ":-:|";
  out << "\n";
  for (size_t r = 0; r < grid.rows.size() && r < kMaxGridRows; ++r) {
    out << "| " << MarkdownCell(grid.rows[r].config) << " |";
    for (const std::optional<ResultCode>& code : grid.rows[r].worst) {
      const std::string mark = MarkdownCell(RunGridMark(code));
      out << " " << (code && IsFailure(*code) ? "**" + mark + "**" : mark) << " |";
    }
    out << "\n";
  }
  if (grid.rows.size() > kMaxGridRows) {
    out << "\n… and " << grid.rows.size() - kMaxGridRows << " more configurations.\n";
  }
  out << "\n" << MarkdownCell(RunGridLegend()) << "\n\n";
}

void WriteFailingCells(const ReportModel& m, std::ostream& out) {
  size_t failing = 0;
  for (const CellGroup& g : m.groups) {
    for (const ConfigRow& r : g.rows) failing += IsFailure(r.cell->code) ? 1 : 0;
  }
  if (failing == 0) return;
  out << "### Failing cells\n\n";
  out << "| Checkpoint | Scenario | Configuration | Result | First divergence | Message |\n";
  out << "|---|---|---|---|---|---|\n";
  size_t written = 0;
  for (const CellGroup& g : m.groups) {
    for (const ConfigRow& r : g.rows) {
      const CellResult& c = *r.cell;
      if (!IsFailure(c.code) || written == kMaxFailingRows) continue;
      ++written;
      out << "| " << MarkdownCell(c.checkpoint) << " | " << MarkdownCell(c.scenario) << " | "
          << MarkdownCell(c.config.name) << " | " << ResultCodeName(c.code) << " | "
          << MarkdownCell(FirstDivergenceText(*m.run, g, r)) << " | " << MarkdownCell(c.message)
          << " |\n";
    }
  }
  if (failing > written) out << "\n… and " << failing - written << " more failing cells.\n";
  out << "\n";
}

void WriteDumpStatistics(const ReportModel& m, std::ostream& out) {
  if (m.dumps.empty()) return;
  out << "### Logit differences (raw dumps)\n\n";
  out << "| Checkpoint | Scenario | Configurations | Step | Differing values | Max ULP | "
         "Max abs diff | Max rel diff (÷ row's max abs logit) | Argmax |\n";
  out << "|---|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const DumpComparison& d : m.dumps) {
    const std::string prefix = "| " + MarkdownCell(d.checkpoint) + " | " +
                               MarkdownCell(d.scenario) + " | " + MarkdownCell(d.config_a) +
                               " vs " + MarkdownCell(d.config_b) + " | ";
    if (!d.error.empty()) {
      out << prefix << " | | | | | " << MarkdownCell(d.error) << " |\n";
      continue;
    }
    for (const StepLogitDiff& s : d.steps) {
      const RowComparison& c = s.comparison;
      out << prefix << s.step_index << " | " << c.differing << " of " << d.vocab_size << " | "
          << FormatUlp(c.max_ulp) << " | " << FormatDouble(c.max_abs_diff) << " | "
          << FormatDouble(c.max_rel_diff) << " (÷ " << FormatDouble(c.row_max_abs) << ") | "
          << (c.argmax_a == c.argmax_b ? "same (" + std::to_string(c.argmax_a) + ")"
                                       : "**changed** " + std::to_string(c.argmax_a) + " → " +
                                             std::to_string(c.argmax_b))
          << " |\n";
    }
  }
  out << "\n";
}

void WriteMatrices(const ReportModel& m, std::ostream& out) {
  for (const CellGroup& g : m.groups) {
    if (g.columns.empty()) continue;
    out << "### Agreement: " << MarkdownCell(g.checkpoint) << " / " << MarkdownCell(g.scenario)
        << "\n\n";
    if (g.columns.size() > kMaxMatrixColumns) {
      out << g.columns.size() << " steps: see the HTML report for the matrix.\n\n";
      continue;
    }
    out << "Against " << MarkdownCode(g.rows[g.base_row].cell->config.name)
        << ": `=` same hashes, **X** differs, `-` missing.\n\n";
    out << "| Configuration |";
    for (const StepColumn& c : g.columns) out << " " << c.index << " |";
    out << "\n|---|";
    for (size_t i = 0; i < g.columns.size(); ++i) out << ":-:|";
    out << "\n";
    if (HasTokenText(g)) {
      out << "| Token (" << MarkdownCell(g.rows[g.base_row].cell->config.name) << ") |";
      for (const StepColumn& c : g.columns) out << " " << MarkdownCell(TokenWithText(c)) << " |";
      out << "\n";
    }
    for (size_t r = 0; r < g.rows.size() && r < kMaxMatrixRows; ++r) {
      out << "| " << MarkdownCell(g.rows[r].cell->config.name) << " |";
      for (Agreement a : g.rows[r].agreement) out << " " << AgreementSymbol(a) << " |";
      out << "\n";
    }
    if (g.rows.size() > kMaxMatrixRows) {
      out << "\n… and " << g.rows.size() - kMaxMatrixRows << " more configurations.\n";
    }
    out << "\n";
  }
}

void WriteMachine(const ReportModel& m, std::ostream& out) {
  const MachineInfo& mi = m.run->machine;
  out << "### Machine\n\n";
  // Fields a child did not report are left out rather than printed empty.
  const auto line = [&](std::initializer_list<std::string> parts) {
    std::string text;
    for (const std::string& p : parts) {
      if (!p.empty()) text += (text.empty() ? "" : ", ") + MarkdownCell(p);
    }
    if (!text.empty()) out << "- " << text << "\n";
  };
  line({mi.arch, mi.cpu});
  line({mi.os, mi.kernel.empty() ? "" : "kernel " + mi.kernel, mi.libc});
  if (!mi.isa_features.empty()) {
    out << "- ISA features:";
    for (const std::string& f : mi.isa_features) out << " " << MarkdownCell(f);
    out << "\n";
  }
  for (const MathLibraryInfo& l : m.math_libraries) {
    out << "- Math library (" << MarkdownCell(l.profile) << "): " << MarkdownCell(l.name) << " "
        << MarkdownCell(l.version) << ", fingerprint " << MarkdownCell(l.fingerprint) << "\n";
  }
  for (const BuildInfo& b : m.builds) {
    out << "- Build: " << MarkdownCell(b.engine) << " " << MarkdownCell(b.version) << " at "
        << MarkdownCell(b.revision) << (b.dirty ? " (dirty)" : "") << ", "
        << MarkdownCell(b.compiler) << "\n";
  }
  out << "\n";
}

void WriteStderrTails(const ReportModel& m, std::ostream& out) {
  for (const CellGroup& g : m.groups) {
    for (const ConfigRow& r : g.rows) {
      const CellResult& c = *r.cell;
      if (!IsFailure(c.code) || c.stderr_tail.empty()) continue;
      const std::string tail = RemoveControlCharacters(c.stderr_tail);
      const std::string fence = CodeFenceFor(tail);
      out << "<details><summary>stderr of " << HtmlEscape(c.checkpoint) << " / "
          << HtmlEscape(c.scenario) << " / " << HtmlEscape(c.config.name) << "</summary>\n\n"
          << fence << "\n"
          << tail << (tail.ends_with('\n') ? "" : "\n") << fence << "\n\n</details>\n\n";
    }
  }
}

class MarkdownExporter final : public Exporter {
 public:
  void Write(const ReportModel& m, std::ostream& out) const override {
    WriteHeadline(m, out);
    WriteCounts(m, out);
    WriteGridMarkdown(m, out);
    WriteFailingCells(m, out);
    WriteDumpStatistics(m, out);
    WriteMatrices(m, out);
    WriteMachine(m, out);
    WriteStderrTails(m, out);
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeMarkdownExporter() {
  return std::make_unique<MarkdownExporter>();
}

}  // namespace samebits::harness::report
