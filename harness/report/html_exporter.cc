// The HTML report: one self-contained page (inline CSS, no scripts, no
// external assets, so it can be archived as a CI artifact and opened
// anywhere). Its centre is a matrix of configurations x steps per
// (checkpoint, scenario), coloured by agreement with the base configuration,
// with each configuration's first divergence outlined. Every string from
// outside goes through `HtmlEscape`, attribute values included.
#include <ostream>
#include <string>

#include "harness/report/escape.h"
#include "harness/report/exporter.h"
#include "harness/report/run_grid.h"

namespace samebits::harness::report {
namespace {

constexpr const char* kRunStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 .pass { color: #17692e; } h1 .fail { color: #a31515; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; font-size: 13px; }
th { background: #f3f3f3; }
td.same { background: #5cb85c; } td.differs { background: #d9534f; }
td.missing { background: #bbb; }
td.first { outline: 3px solid #111; outline-offset: -3px; }
table.matrix td { min-width: 14px; height: 16px; padding: 0; }
table.matrix th.config { text-align: left; }
.code-PASS { color: #17692e; } .code-UNSUPPORTED { color: #666; }
.code-FAIL, .code-UNRESOLVED, .code-TIMEOUT { color: #a31515; font-weight: bold; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; }
.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }
table.grid td.mark { text-align: center; font-family: ui-monospace, monospace; }
td.mark.code-PASS { background: #e3f4e8; } td.mark.code-KNOWN { background: #fff4cc; }
td.mark.code-FAIL, td.mark.code-UNRESOLVED, td.mark.code-TIMEOUT, td.mark.code-FIXED {
  background: #f8d7d7; }
td.mark.code-UNSUPPORTED { background: #eee; }
)css";

const char* AgreementClass(Agreement a) {
  switch (a) {
    case Agreement::kSame:
      return "same";
    case Agreement::kDiffers:
      return "differs";
    case Agreement::kMissing:
      return "missing";
  }
  return "missing";
}

const char* AgreementWord(Agreement a) {
  switch (a) {
    case Agreement::kSame:
      return "same hashes as";
    case Agreement::kDiffers:
      return "differs from";
    case Agreement::kMissing:
      return "missing here or in";
  }
  return "";
}

void WriteDiagnosis(const ReportModel& m, std::ostream& out) {
  const Diagnosis& d = m.run->diagnosis;
  out << "<h2>Diagnosis: " << DiagnosisKindTitle(d.kind) << "</h2>\n";
  out << "<p>" << HtmlEscape(d.headline) << "</p>\n";
  // The details already roll the divergences up (one line per pair of
  // configurations); each cell's own first divergence is in the cells table.
  if (!d.details.empty()) {
    out << "<ul>\n";
    for (const std::string& s : d.details) out << "<li>" << HtmlEscape(s) << "</li>\n";
    out << "</ul>\n";
  }
}

void WriteCounts(const ReportModel& m, std::ostream& out) {
  out << "<h2>Results</h2>\n<table>\n<tr><th>Result</th><th>Cells</th></tr>\n";
  for (size_t i = 0; i < kAllResultCodes.size(); ++i) {
    if (m.counts[i] == 0) continue;
    const char* name = ResultCodeName(kAllResultCodes[i]);
    out << "<tr><td class=\"code-" << name << "\">" << name << "</td><td>" << m.counts[i]
        << "</td></tr>\n";
  }
  out << "</table>\n";
}

// The grid (run_grid.h): a row per configuration, a column per checkpoint,
// the worst result of each pair, coloured, with the machine and build
// above it.
void WriteGridHtml(const ReportModel& m, std::ostream& out) {
  const RunGrid grid = BuildRunGrid(*m.run);
  if (grid.rows.empty()) return;
  const MachineInfo& mi = m.run->machine;
  out << "<h2>At a glance</h2>\n<p>Machine: " << HtmlEscape(mi.arch + ", " + mi.cpu) << ".";
  if (const std::string build = RunBuildText(*m.run); !build.empty())
    out << " Engine: " << HtmlEscape(build) << ".";
  for (const std::string& line : {RunServerText(*m.run), RunReadbackText(*m.run)}) {
    if (!line.empty()) out << " " << HtmlEscape(line);
  }
  out << "</p>\n<table class=\"grid\">\n<tr><th>Configuration</th>";
  for (const std::string& column : grid.columns) out << "<th>" << HtmlEscape(column) << "</th>";
  out << "</tr>\n";
  for (const RunGrid::Row& row : grid.rows) {
    out << "<tr><td>" << HtmlEscape(row.config) << "</td>";
    for (size_t c = 0; c < row.worst.size(); ++c) {
      if (!row.worst[c]) {
        out << "<td class=\"mark\"></td>";
        continue;
      }
      const char* name = ResultCodeName(*row.worst[c]);
      out << "<td class=\"mark code-" << name << "\" title=\"" << name;
      if (row.cells[c] > 1) out << " (the worst of " << row.cells[c] << " cells)";
      out << "\">" << HtmlEscape(RunGridMark(row.worst[c])) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p>" << HtmlEscape(RunGridLegend()) << "</p>\n";
}

void WriteCells(const ReportModel& m, std::ostream& out) {
  out << "<h2>Cells</h2>\n<table>\n<tr><th>Checkpoint</th><th>Scenario</th>"
         "<th>Configuration</th><th>Result</th><th>Steps</th><th>Time (ms)</th>"
         "<th>First divergence</th><th>Message</th></tr>\n";
  for (const CellGroup& g : m.groups) {
    for (const ConfigRow& r : g.rows) {
      const CellResult& c = *r.cell;
      const char* code = ResultCodeName(c.code);
      out << "<tr><td>" << HtmlEscape(c.checkpoint) << "</td><td>" << HtmlEscape(c.scenario)
          << "</td><td>" << HtmlEscape(c.config.name) << "</td><td class=\"code-" << code << "\">"
          << code << "</td><td>" << c.steps.size() << "</td><td>" << FormatMs(c.elapsed_ms)
          << "</td><td>" << HtmlEscape(FirstDivergenceText(*m.run, g, r)) << "</td><td>"
          << HtmlEscape(c.message) << "</td></tr>\n";
    }
  }
  out << "</table>\n";
}

// Returns whether every configuration of the group either has every step
// with the base's hashes or has no steps at all (UNSUPPORTED): nothing for
// a per-step matrix to show.
bool AllAgree(const CellGroup& g) {
  for (const ConfigRow& r : g.rows) {
    if (r.first_divergence) return false;
    for (const Agreement a : r.agreement) {
      if (a != r.agreement.front() || a == Agreement::kDiffers) return false;
    }
  }
  return true;
}

// An agreeing group in one paragraph: which configurations agree over how
// many steps, which have none, and the generated text. A default matrix of
// a thousand agreeing cells then stays a page of a few hundred KB.
void WriteAgreeingGroup(const CellGroup& g, const std::string& base, std::ostream& out) {
  std::string agree, none;
  for (const ConfigRow& r : g.rows) {
    const bool same = !r.agreement.empty() && r.agreement.front() == Agreement::kSame;
    std::string& list = same || &r == &g.rows[g.base_row] ? agree : none;
    list += (list.empty() ? "" : ", ") + r.cell->config.name;
  }
  out << "<p class=\"agree\">Every step (" << g.columns.size() << ") has the same hashes in "
      << HtmlEscape(agree) << ".";
  if (!none.empty()) out << " No steps from " << HtmlEscape(none) << ".";
  out << "</p>\n";
  if (HasTokenText(g)) {
    out << "<p>Tokens (" << HtmlEscape(base) << "):";
    for (const StepColumn& c : g.columns)
      out << " <code>" << HtmlEscape(TokenWithText(c)) << "</code>";
    out << "</p>\n";
  }
}

void WriteMatrix(const CellGroup& g, std::ostream& out) {
  const std::string base = g.rows[g.base_row].cell->config.name;
  out << "<h3>" << HtmlEscape(g.checkpoint) << " / " << HtmlEscape(g.scenario) << "</h3>\n";
  if (g.columns.empty()) {
    out << "<p>No configuration produced a step.</p>\n";
    return;
  }
  if (AllAgree(g)) return WriteAgreeingGroup(g, base, out);
  out << "<p class=\"legend\">Against " << HtmlEscape(base)
      << ":<span style=\"background:#5cb85c\"></span>same hashes"
         "<span style=\"background:#d9534f\"></span>differs"
         "<span style=\"background:#bbb\"></span>missing"
         "<span style=\"outline:3px solid #111\"></span>first divergence</p>\n";
  out << "<table class=\"matrix\">\n<tr><th class=\"config\">Configuration</th>";
  for (const StepColumn& c : g.columns) {
    out << "<th title=\"" << HtmlEscape(DescribeStep(c)) << "\">" << c.index << "</th>";
  }
  out << "</tr>\n";
  if (HasTokenText(g)) {
    // The chosen tokens as text, so a person sees what the steps generated.
    out << "<tr><th class=\"config\">Token (" << HtmlEscape(base) << ")</th>";
    for (const StepColumn& c : g.columns) {
      out << "<td class=\"token\" title=\""
          << HtmlEscape(DescribeStep(c) + ": token " + TokenWithText(c)) << "\"><code>"
          << HtmlEscape(TokenWithText(c)) << "</code></td>";
    }
    out << "</tr>\n";
  }
  for (const ConfigRow& r : g.rows) {
    const CellResult& cell = *r.cell;
    out << "<tr><th class=\"config\">" << HtmlEscape(cell.config.name) << "</th>";
    // Runs of steps that compare alike are one cell spanning them, so a
    // default matrix of hundreds of cells x dozens of steps stays a page of
    // a few hundred KB; the first divergence always stands alone.
    for (size_t c = 0; c < g.columns.size();) {
      const bool first = r.first_divergence && *r.first_divergence == c;
      size_t end = c + 1;
      while (!first && end < g.columns.size() && r.agreement[end] == r.agreement[c] &&
             !(r.first_divergence && *r.first_divergence == end)) {
        ++end;
      }
      const std::string steps = end - c == 1
                                    ? DescribeStep(g.columns[c])
                                    : "steps " + std::to_string(g.columns[c].index) + " to " +
                                          std::to_string(g.columns[end - 1].index);
      std::string title = cell.config.name;
      title += ", " + steps + ": ";
      title += AgreementWord(r.agreement[c]);
      title += " " + base;
      out << "<td";
      if (end - c > 1) out << " colspan=\"" << (end - c) << "\"";
      out << " class=\"" << AgreementClass(r.agreement[c]) << (first ? " first" : "")
          << "\" title=\"" << HtmlEscape(title) << "\"></td>";
      c = end;
    }
    out << "</tr>\n";
  }
  out << "</table>\n";
}

void WriteDumpStatistics(const ReportModel& m, std::ostream& out) {
  if (m.dumps.empty()) return;
  out << "<h2>Logit differences (raw dumps)</h2>\n<table>\n<tr><th>Checkpoint</th>"
         "<th>Scenario</th><th>Configurations</th><th>Step</th><th>Differing values</th>"
         "<th>Max ULP</th><th>Max abs diff</th>"
         "<th>Max rel diff (&divide; the row&rsquo;s max |logit|)</th><th>Argmax</th></tr>\n";
  for (const DumpComparison& d : m.dumps) {
    const std::string prefix = "<tr><td>" + HtmlEscape(d.checkpoint) + "</td><td>" +
                               HtmlEscape(d.scenario) + "</td><td>" + HtmlEscape(d.config_a) +
                               " vs " + HtmlEscape(d.config_b) + "</td>";
    if (!d.error.empty()) {
      out << prefix << "<td colspan=\"6\">" << HtmlEscape(d.error) << "</td></tr>\n";
      continue;
    }
    for (const StepLogitDiff& s : d.steps) {
      const RowComparison& c = s.comparison;
      out << prefix << "<td>" << s.step_index << "</td><td>" << c.differing << " of "
          << d.vocab_size << "</td><td>" << FormatUlp(c.max_ulp) << "</td><td>"
          << FormatDouble(c.max_abs_diff) << "</td><td>" << FormatDouble(c.max_rel_diff)
          << " (&divide; " << FormatDouble(c.row_max_abs) << ")</td><td>";
      if (c.argmax_a == c.argmax_b) {
        out << "same (" << c.argmax_a << ")";
      } else {
        out << "<strong>changed</strong> " << c.argmax_a << " &rarr; " << c.argmax_b;
      }
      out << "</td></tr>\n";
    }
  }
  out << "</table>\n";
}

void WriteMachine(const ReportModel& m, std::ostream& out) {
  const MachineInfo& mi = m.run->machine;
  out << "<h2>Machine</h2>\n<table>\n";
  out << "<tr><th>Architecture</th><td>" << HtmlEscape(mi.arch) << "</td></tr>\n";
  out << "<tr><th>CPU</th><td>" << HtmlEscape(mi.cpu) << "</td></tr>\n";
  out << "<tr><th>OS</th><td>" << HtmlEscape(mi.os) << "</td></tr>\n";
  out << "<tr><th>Kernel</th><td>" << HtmlEscape(mi.kernel) << "</td></tr>\n";
  out << "<tr><th>C library</th><td>" << HtmlEscape(mi.libc) << "</td></tr>\n";
  out << "<tr><th>ISA features</th><td>";
  for (size_t i = 0; i < mi.isa_features.size(); ++i) {
    out << (i ? " " : "") << HtmlEscape(mi.isa_features[i]);
  }
  out << "</td></tr>\n</table>\n";
  if (!m.math_libraries.empty()) {
    out << "<h2>Math libraries</h2>\n<table>\n<tr><th>Profile</th><th>Library</th>"
           "<th>Version</th><th>Fingerprint</th></tr>\n";
    for (const MathLibraryInfo& l : m.math_libraries) {
      out << "<tr><td>" << HtmlEscape(l.profile) << "</td><td>" << HtmlEscape(l.name) << "</td><td>"
          << HtmlEscape(l.version) << "</td><td><code>" << HtmlEscape(l.fingerprint)
          << "</code></td></tr>\n";
    }
    out << "</table>\n";
  }
  if (!m.builds.empty()) {
    out << "<h2>Builds</h2>\n<table>\n<tr><th>Engine</th><th>Version</th><th>Revision</th>"
           "<th>Compiler</th><th>Flags</th></tr>\n";
    for (const BuildInfo& b : m.builds) {
      out << "<tr><td>" << HtmlEscape(b.engine) << "</td><td>" << HtmlEscape(b.version)
          << "</td><td><code>" << HtmlEscape(b.revision) << "</code>" << (b.dirty ? " (dirty)" : "")
          << "</td><td>" << HtmlEscape(b.compiler) << "</td><td><code>" << HtmlEscape(b.flags)
          << "</code></td></tr>\n";
    }
    out << "</table>\n";
  }
}

void WriteStderrTails(const ReportModel& m, std::ostream& out) {
  bool any = false;
  for (const CellResult& c : m.run->cells) {
    if (c.stderr_tail.empty()) continue;
    if (!any) out << "<h2>Standard error</h2>\n";
    any = true;
    out << "<h3>" << HtmlEscape(c.checkpoint) << " / " << HtmlEscape(c.scenario) << " / "
        << HtmlEscape(c.config.name) << "</h3>\n<pre>" << HtmlEscape(c.stderr_tail) << "</pre>\n";
  }
}

class HtmlExporter final : public Exporter {
 public:
  void Write(const ReportModel& m, std::ostream& out) const override {
    const RunResult& run = *m.run;
    const char* verdict = m.passed ? "PASS" : "FAIL";
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<title>samebits run " << run.run_id << ": " << verdict << "</title>\n"
        << "<style>" << kRunStyle << "</style>\n</head>\n<body>\n";
    out << "<h1>samebits run " << run.run_id << ": <span class=\"" << (m.passed ? "pass" : "fail")
        << "\">" << verdict << "</span></h1>\n";
    out << "<p>Started " << HtmlEscape(run.started_at) << ", " << run.cells.size() << " cells, "
        << FormatMs(run.elapsed_ms) << " ms.</p>\n";
    if (!run.command.empty())
      out << "<p>Command: <code>" << HtmlEscape(run.command) << "</code></p>\n";
    WriteDiagnosis(m, out);
    WriteCounts(m, out);
    WriteGridHtml(m, out);
    out << "<h2>Agreement matrices</h2>\n";
    for (const CellGroup& g : m.groups) WriteMatrix(g, out);
    WriteDumpStatistics(m, out);
    WriteCells(m, out);
    WriteMachine(m, out);
    WriteStderrTails(m, out);
    out << "</body>\n</html>\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeHtmlExporter() {
  return std::make_unique<HtmlExporter>();
}

}  // namespace samebits::harness::report
