// The Markdown conformance report, for a pull request: the verdict, one
// table row per checkpoint and scenario, and per measured pair its
// statistics (each mean ± its standard error) and the steps worth reading
// (every step of a short run, else the deviating, fragile and unstable ones).
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
  out << "| Checkpoint | Scenario | A | B | Verdict | Stability | Steps | NMSE max | KLD mean ± se "
         "| "
         "KLD p99 / max | Δp mean ± se | Same top-1 | Top-5 overlap | max \\|a - b\\| | ulp p50 / "
         "p99 / max |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const PairConformance& p : c.pairs) {
    out << "| " << M(p.checkpoint) << " | " << M(p.scenario) << " | " << M(p.config_a) << " | "
        << M(p.config_b) << " | " << PairVerdictName(p) << " | ";
    if (!p.compared) {
      out << "- | - | - | - | - | - | - | - | - | - |\n";
      continue;
    }
    const ConformanceSummary& s = p.summary;
    out << StabilityCell(s) << " | " << s.steps << " of " << p.steps_a << " | "
        << FormatMetric(s.max_nmse) << " | " << FormatEstimate(s.kld_mean, s.kld_mean_se) << " | "
        << FormatMetric(s.kld_p99) << " / " << FormatMetric(s.kld_max) << " | "
        << FormatPercentOfProbability(s.delta_p_mean) << " | " << s.top1_agreements << "/"
        << s.steps << " | " << FormatMetric(s.top_overlap_mean) << " | "
        << FormatMetric(s.max_abs_diff) << " | " << FormatUlp(s.ulp.p50) << " / "
        << FormatUlp(s.ulp.p99) << " / " << FormatUlp(s.ulp.max) << " |\n";
  }
}

// The pair's statistics, one per row, as llama-perplexity --kl-divergence
// lists them.
void WriteStatistics(const ConformanceSummary& s, std::ostream& out) {
  const std::string kld_of = " (" + std::to_string(s.kld_steps) + " steps)";
  out << "\n| Statistic | Value |\n|---|---|\n"
      << "| NMSE mean ± se | " << FormatEstimate(s.mean_nmse, s.mean_nmse_se) << " |\n"
      << "| NMSE max | " << FormatMetric(s.max_nmse) << " |\n"
      << "| KLD mean ± se | " << FormatEstimate(s.kld_mean, s.kld_mean_se) << kld_of << " |\n"
      << "| KLD median | " << FormatMetric(s.kld_median) << " |\n"
      << "| KLD p99 / p99.9 / max | " << FormatMetric(s.kld_p99) << " / "
      << FormatMetric(s.kld_p999) << " / " << FormatMetric(s.kld_max) << " |\n"
      << "| Δp mean ± se | " << FormatPercentOfProbability(s.delta_p_mean) << " |\n"
      << "| RMS Δp ± se | " << FormatPercentOfProbability(s.delta_p_rms) << " |\n"
      << "| Same top-1 ± se | " << FormatEstimate(s.top1_percent.value, s.top1_percent.se) << " % ("
      << s.top1_agreements << " of " << s.steps << " steps) |\n"
      << "| Top-5 overlap mean ± se | " << FormatEstimate(s.top_overlap_mean, s.top_overlap_mean_se)
      << " |\n"
      << "| Steps fragile / unstable | " << s.fragile_steps << " / " << s.unstable_steps << " |\n";
}

void WritePair(const PairConformance& p, std::ostream& out) {
  out << "\n### " << M(p.checkpoint) << " / " << M(p.scenario) << ": " << M(PairVerdictLine(p))
      << "\n\n";
  out << "A: " << M(SideName(p.engine_a, p.config_a))
      << ". B: " << M(SideName(p.engine_b, p.config_b)) << ".\n\n";
  if (!p.compared) {
    out << "Not compared: " << M(p.reason) << "\n";
    return;
  }
  out << "Measured " << M(DescribeCoverage(p)) << ".\n";
  for (const std::string& note : p.notes) out << "\nNote: " << M(note) << "\n";
  WriteStatistics(p.summary, out);
  const std::vector<const StepConformance*> listed = ListedSteps(p, kMarkdownListedSteps);
  if (listed.empty()) return;
  out << "\n| Step | NMSE | KLD | Δp % | Top-1 A / B | Margin | \\|Δ\\| top-1 + top-2 | Stability "
         "| Top-5 overlap | max \\|a - b\\| | ulp p50 / p99 / max | |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const StepConformance* s : listed) {
    out << "| " << s->step_index << " | " << FormatMetric(s->nmse) << " | "
        << FormatMetric(s->kl_divergence) << " | " << FormatMetric(100 * s->delta_p) << " | "
        << s->top1_a << " / " << s->top1_b << " | " << FormatMetric(s->margin) << " | "
        << FormatMetric(s->top_disagreement) << " | " << StabilityName(s->stability) << " | "
        << s->top_overlap << "/" << s->top_count << " | " << FormatMetric(s->max_abs_diff) << " | "
        << FormatUlp(s->ulp.p50) << " / " << FormatUlp(s->ulp.p99) << " / " << FormatUlp(s->ulp.max)
        << " | " << (s->deviates ? "**deviates**: " + M(DescribeStepDeviation(*s)) : "") << " |\n";
  }
  if (listed.size() < p.steps.size()) {
    out << "\n"
        << p.steps.size() - listed.size()
        << " more steps are left out here (stable and within the threshold); the HTML and JSON "
           "reports list every step.\n";
  }
}

class MarkdownWriter final : public ConformanceExporter {
 public:
  void Write(const RunConformance& c, std::ostream& out) const override {
    out << "## samebits conform: " << M(c.headline) << "\n\n"
        << "A (the reference): " << M(c.label_a) << "  \nB: " << M(c.label_b)
        << "  \nThreshold: NMSE <= " << FormatMetric(c.threshold.max_nmse) << " per step.\n\n"
        << kConformanceStatisticsNote << "\n\n";
    WriteSummaryTable(c, out);
    for (const PairConformance& p : c.pairs) WritePair(p, out);
  }
};

}  // namespace

std::unique_ptr<ConformanceExporter> MakeConformanceMarkdownExporter() {
  return std::make_unique<MarkdownWriter>();
}

}  // namespace samebits::harness::report
