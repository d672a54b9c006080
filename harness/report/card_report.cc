// The card report's formats (card_report.h).
#include "harness/report/card_report.h"

#include "harness/report/conformance_report.h"
#include "harness/report/report_formats.h"
#include "harness/report/run_grid.h"

namespace samebits::harness::report {
namespace {

struct CardFormat {
  std::string_view name;  // a name of report_formats.h's list
  void (*write)(const Card&, std::ostream&);
};

constexpr CardFormat kCardFormats[] = {
    {"md", WriteCardMarkdown},
    {"html", WriteCardHtml},
};
static_assert(FormatsAreListed(kCardFormats), "a card's formats are named in report_formats.h");

}  // namespace

std::vector<std::string> CardReportFormats() {
  std::vector<std::string> names;
  for (const CardFormat& f : kCardFormats) names.emplace_back(f.name);
  return names;
}

void WriteCardReport(const Card& card, std::string_view format, std::ostream& out) {
  FindFormatRow(kCardFormats, format).write(card, out);
}

std::string ReferenceConformanceLine(const CardTable& table) {
  const std::string lead =
      "Conformance of " + table.baseline + " to samebits-engine's reference pass: ";
  if (!table.reference_problem.empty()) return lead + "not measured: " + table.reference_problem;
  if (!table.reference_conformance) return "";
  const PairConformance& p = *table.reference_conformance;
  if (!p.compared) return lead + "not compared: " + p.reason;
  const ConformanceSummary& s = p.summary;
  return lead + PairVerdictLine(p) + " over " + DescribeCoverage(p) + ": NMSE max " +
         FormatMetric(s.max_nmse) + ", mean " + FormatMetric(s.mean_nmse) + "; KLD mean " +
         FormatEstimate(s.kld_mean, s.kld_mean_se) + ", median " + FormatMetric(s.kld_median) +
         ", p99 " + FormatMetric(s.kld_p99) + ", max " + FormatMetric(s.kld_max) + "; Δp mean " +
         FormatPercentOfProbability(s.delta_p_mean) + ", RMS Δp " +
         FormatPercentOfProbability(s.delta_p_rms) + "; same top-1 on " +
         std::to_string(s.top1_agreements) + " of " + std::to_string(s.steps) +
         " steps; max |a - b| " + FormatMetric(s.max_abs_diff);
}

std::string CardMachineLine(const Card& card) {
  if (!card.machine) return "";
  const MachineInfo& m = *card.machine;
  return "Machine: " + m.arch + ", " + m.cpu + ", " + m.os + " " + m.kernel + ", " + m.libc + ".";
}

std::string CardBuildLine(const Card& card) {
  return card.build ? "Build: " + BuildText(*card.build) + "." : "";
}

bool CardComparesWholeRows(const Card& card) {
  return !card.readback || card.readback->kind == "full";
}

std::string CardComparedText(const Card& card) {
  if (CardComparesWholeRows(card)) return "every step's logits";
  return protocol::DescribeReadback(*card.readback) + " (not whole logit rows: all the engine " +
         "returned)";
}

std::string CardVerdictText(const Card& card) {
  const int code = card.ExitCode();
  return code == 0 ? "no unexpected difference" : code == 1 ? "unexpected results" : "nothing ran";
}

namespace {

std::string OutcomeSummary(const CardRow& row) {
  std::string where = "differs from step " + std::to_string(row.first_step) + " (position " +
                      std::to_string(row.first_position) + ")";
  switch (row.outcome) {
    case CardOutcome::kIdentical:
      return "identical";
    case CardOutcome::kDiffers:
      return where;
    case CardOutcome::kKnown:
      return "KNOWN: " + where;
    case CardOutcome::kFixed:
      return "FIXED: identical, though declared to differ";
    case CardOutcome::kNotRun:
      return "UNSUPPORTED: " + row.detail;
    case CardOutcome::kBroken:
      return "BROKEN: " + row.detail;
  }
  return "";
}

}  // namespace

std::string CardRowSummary(const CardRow& row) {
  const std::string outcome = OutcomeSummary(row);
  std::string summary = outcome;
  for (const std::string* extra : {&row.repeats, &row.sampling}) {
    if (!extra->empty()) summary += "; " + *extra;
  }
  return summary;
}

}  // namespace samebits::harness::report
