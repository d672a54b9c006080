// The Markdown determinism card (card_report.h): one table per checkpoint
// and scenario, axis x result.
#include <ostream>

#include "harness/report/card_report.h"
#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

std::string M(const std::string& s) {
  return MarkdownCell(s);
}

std::string Optional(const std::optional<double>& x) {
  return x ? FormatMetric(*x) : "-";
}

}  // namespace

void WriteCardMarkdown(const Card& card, std::ostream& out) {
  const int code = card.ExitCode();
  out << "## Determinism card: " << M(card.engine) << "\n\n"
      << "Profile " << M(card.profile_file) << "; each row varies one axis of the baseline **"
      << M(card.baseline) << "** and compares every step's logits bit for bit. Verdict: "
      << (code == 0   ? "no unexpected difference"
          : code == 1 ? "**unexpected results**"
                      : "nothing ran")
      << ".\n";
  if (const std::string machine = CardMachineLine(card); !machine.empty())
    out << "\n" << M(machine) << "\n";
  for (const std::string& device : card.devices) out << "\nDevice: " << M(device) << "\n";
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
          << M(CardRowSummary(r)) << " | " << Optional(r.first_nmse) << " | "
          << Optional(r.first_kld) << " | " << Optional(r.max_nmse) << " | "
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
