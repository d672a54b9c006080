// The Markdown determinism card (card_report.h): one table per checkpoint
// and scenario, axis x result.
#include <ostream>

#include "harness/report/card_grid.h"
#include "harness/report/card_report.h"
#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

std::string M(const std::string& s) {
  return MarkdownCell(s);
}

// The grid: a row per varied value, a column per table, one mark each; a
// mark that fails the card is bold.
void WriteGridMarkdown(const Card& card, std::ostream& out) {
  const CardGrid grid = BuildCardGrid(card);
  if (grid.rows.empty()) return;
  out << "\n### At a glance\n\n| Axis = value (configuration) |";
  for (const std::string& column : grid.columns) out << " " << M(column) << " |";
  out << "\n|---|";
  for (size_t i = 0; i < grid.columns.size(); ++i) out << ":-:|";
  out << "\n";
  for (const CardGrid::Row& row : grid.rows) {
    out << "| " << M(GridRowLabel(row)) << " |";
    for (const CardRow* cell : row.cells) {
      const std::string mark = M(GridMark(cell));
      const bool fails = cell != nullptr && OutcomeInfo(cell->outcome).failure;
      out << " " << (fails ? "**" + mark + "**" : mark) << " |";
    }
    out << "\n";
  }
  out << "\n" << M(GridLegend(CardComparesWholeRows(card))) << "\n";
}

}  // namespace

void WriteCardMarkdown(const Card& card, std::ostream& out) {
  const int code = card.ExitCode();
  const std::string verdict = CardVerdictText(card);
  out << "## Determinism card: " << M(card.engine) << "\n\n"
      << "Profile " << M(card.profile_file) << "; each row varies one axis of the baseline **"
      << M(card.baseline) << "** and compares " << M(CardComparedText(card))
      << " bit for bit. Verdict: " << (code == 1 ? "**" + verdict + "**" : verdict) << ".\n";
  if (const ProbePower power = MeasureProbePower(card); power.measured)
    out << "\n" << (power.seen ? M(power.line) : "**" + M(power.line) + "**") << "\n";
  if (const std::string machine = CardMachineLine(card); !machine.empty())
    out << "\n" << M(machine) << "\n";
  if (const std::string build = CardBuildLine(card); !build.empty())
    out << "\n" << M(build) << "\n";
  for (const std::string& device : card.devices) out << "\nDevice: " << M(device) << "\n";
  WriteGridMarkdown(card, out);
  for (const std::string& note : card.notes) out << "\nNote: " << M(note) << "\n";
  for (const CardTable& t : card.tables) {
    out << "\n### " << M(t.checkpoint) << " / " << M(t.scenario) << "\n\n";
    if (!t.baseline_problem.empty()) out << M(t.baseline_problem) << "\n\n";
    if (const std::string line = ReferenceConformanceLine(t); !line.empty()) {
      out << M(line) << "\n\n";
    }
    out << "| Axis | Value | Configuration | Result | NMSE at first difference | KLD | "
           "max NMSE | Argmax moved |\n|---|---|---|---|---|---|---|---|\n";
    for (const CardRow& r : t.rows) {
      out << "| " << M(r.axis) << " | " << M(r.value) << " | " << M(r.config) << " | "
          << M(CardRowSummary(r)) << " | " << FormatOptionalMetric(r.first_nmse) << " | "
          << FormatOptionalMetric(r.first_kld) << " | " << FormatOptionalMetric(r.max_nmse) << " | "
          << (r.argmax_moved ? (*r.argmax_moved ? "yes" : "no") : "-") << " |\n";
    }
    for (const CardRow& r : t.rows) {
      if (!r.known_reason.empty())
        out << "\n" << M(r.config) << ": declared: " << M(r.known_reason) << "\n";
      if (r.outcome == CardOutcome::kDiffers || r.outcome == CardOutcome::kKnown)
        out << "\n" << M(r.config) << " at step " << r.first_step << ": " << M(r.detail) << "\n";
    }
  }
}

}  // namespace samebits::harness::report
