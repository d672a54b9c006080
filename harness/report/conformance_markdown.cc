// The Markdown conformance report, for a pull request: the verdict, one
// table row per checkpoint and scenario, and per measured pair the steps
// worth reading (every step of a short run, else the deviating ones).
#include <ostream>

#include "harness/analysis/ulp.h"
#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

std::string M(const std::string& s) {
  return MarkdownCell(s);
}

void WriteSummaryTable(const RunConformance& c, std::ostream& out) {
  out << "| Checkpoint | Scenario | A | B | Verdict | Steps | NMSE max | KLD mean / p99 / max | "
         "Top-1 | Top-5 overlap | max \\|a - b\\| | ulp p50 / p99 / max |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const PairConformance& p : c.pairs) {
    out << "| " << M(p.checkpoint) << " | " << M(p.scenario) << " | " << M(p.config_a) << " | "
        << M(p.config_b) << " | " << PairVerdictName(p) << " | ";
    if (!p.compared) {
      out << "- | - | - | - | - | - | - |\n";
      continue;
    }
    const ConformanceSummary& s = p.summary;
    out << s.steps << " of " << p.steps_a << " | " << FormatMetric(s.max_nmse) << " | "
        << FormatMetric(s.kld_mean) << " / " << FormatMetric(s.kld_p99) << " / "
        << FormatMetric(s.kld_max) << " | " << s.top1_agreements << "/" << s.steps << " | "
        << FormatMetric(s.top_overlap_mean) << " | " << FormatMetric(s.max_abs_diff) << " | "
        << FormatUlp(s.ulp.p50) << " / " << FormatUlp(s.ulp.p99) << " / " << FormatUlp(s.ulp.max)
        << " |\n";
  }
}

void WritePair(const PairConformance& p, std::ostream& out) {
  out << "\n### " << M(p.checkpoint) << " / " << M(p.scenario) << ": " << PairVerdictName(p)
      << "\n\n";
  out << "A: " << M(SideName(p.engine_a, p.config_a))
      << ". B: " << M(SideName(p.engine_b, p.config_b)) << ".\n\n";
  if (!p.compared) {
    out << "Not compared: " << M(p.reason) << "\n";
    return;
  }
  out << "Measured " << M(DescribeCoverage(p)) << ".\n";
  for (const std::string& note : p.notes) out << "\nNote: " << M(note) << "\n";
  const std::vector<const StepConformance*> listed = ListedSteps(p, kMarkdownListedSteps);
  if (listed.empty()) return;
  out << "\n| Step | NMSE | KLD | Top-1 A / B | Top-5 overlap | max \\|a - b\\| | ulp p50 / p99 / "
         "max | |\n|---|---|---|---|---|---|---|---|\n";
  for (const StepConformance* s : listed) {
    out << "| " << s->step_index << " | " << FormatMetric(s->nmse) << " | "
        << FormatMetric(s->kl_divergence) << " | " << s->top1_a << " / " << s->top1_b << " | "
        << s->top_overlap << "/" << s->top_count << " | " << FormatMetric(s->max_abs_diff) << " | "
        << FormatUlp(s->ulp.p50) << " / " << FormatUlp(s->ulp.p99) << " / " << FormatUlp(s->ulp.max)
        << " | " << (s->deviates ? "**deviates**: " + M(s->why) : "") << " |\n";
  }
  if (listed.size() < p.steps.size()) {
    out << "\n"
        << p.steps.size() - listed.size()
        << " more steps are left out here; the HTML and JSON reports list every step.\n";
  }
}

class MarkdownWriter final : public ConformanceExporter {
 public:
  std::string_view Extension() const override { return "md"; }
  void Write(const RunConformance& c, std::ostream& out) const override {
    out << "## samebits conform: " << M(c.headline) << "\n\n"
        << "A (the reference): " << M(c.label_a) << "  \nB: " << M(c.label_b)
        << "  \nThreshold: NMSE <= " << FormatMetric(c.threshold.max_nmse) << " per step.\n\n";
    WriteSummaryTable(c, out);
    for (const PairConformance& p : c.pairs) WritePair(p, out);
  }
};

}  // namespace

std::unique_ptr<ConformanceExporter> MakeConformanceMarkdownExporter() {
  return std::make_unique<MarkdownWriter>();
}

}  // namespace samebits::harness::report
