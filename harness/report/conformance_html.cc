// The HTML conformance report: self-contained (no scripts, no external
// files), the verdict, the summary table with every statistic (each mean ±
// its standard error) and, per measured pair, a chart of NMSE and KLD per
// step (conformance_chart.h) and every step's measurements with the
// deviating ones marked, and the fragile and unstable ones shaded.
#include <ostream>

#include "harness/analysis/ulp.h"
#include "harness/report/conformance_chart.h"
#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

constexpr const char* kConformanceStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 .pass { color: #17692e; } h1 .fail { color: #a31515; } h1 .none { color: #666; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; font-size: 13px; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.deviates td { background: #f6d5d4; } tr.near td { background: #fbf0cf; }
.CONFORMS { color: #17692e; } .DEVIATES { color: #a31515; font-weight: bold; }
)css";

std::string VerdictClass(const char* verdict) {
  const std::string v = verdict;
  return v == "NOT COMPARED" ? "none" : v;
}

// A table cell holding a number (or a number with its error).
std::string Num(const std::string& text) {
  return "<td class=\"num\">" + HtmlEscape(text) + "</td>";
}

void WriteSummary(const RunConformance& c, std::ostream& out) {
  out << "<table>\n<tr><th>Checkpoint</th><th>Scenario</th><th>A</th><th>B</th><th>Verdict</th>"
         "<th>Stability</th><th>Steps</th><th>NMSE max</th><th>NMSE mean ± se</th>"
         "<th>KLD mean ± se</th><th>KLD median</th><th>KLD p99</th><th>KLD p99.9</th>"
         "<th>KLD max</th><th>Δp mean ± se</th><th>RMS Δp ± se</th><th>Same top-1 ± se</th>"
         "<th>Top-5 overlap ± se</th><th>max |a - b|</th><th>ulp p50</th><th>ulp p99</th>"
         "<th>ulp max</th></tr>\n";
  for (const PairConformance& p : c.pairs) {
    const char* verdict = PairVerdictName(p);
    out << "<tr><td>" << HtmlEscape(p.checkpoint) << "</td><td>" << HtmlEscape(p.scenario)
        << "</td><td>" << HtmlEscape(p.config_a) << "</td><td>" << HtmlEscape(p.config_b)
        << "</td><td class=\"" << VerdictClass(verdict) << "\">" << verdict << "</td>";
    if (!p.compared) {
      out << "<td colspan=\"17\">" << HtmlEscape(p.reason) << "</td></tr>\n";
      continue;
    }
    const ConformanceSummary& s = p.summary;
    out << "<td>" << HtmlEscape(StabilityCell(s)) << "</td>"
        << Num(std::to_string(s.steps) + " of " + std::to_string(p.steps_a))
        << Num(FormatMetric(s.max_nmse)) << Num(FormatEstimate(s.mean_nmse, s.mean_nmse_se))
        << Num(FormatEstimate(s.kld_mean, s.kld_mean_se));
    for (const double x : {s.kld_median, s.kld_p99, s.kld_p999, s.kld_max}) {
      out << Num(FormatMetric(x));
    }
    out << Num(FormatPercentOfProbability(s.delta_p_mean))
        << Num(FormatPercentOfProbability(s.delta_p_rms))
        << Num(FormatEstimate(s.top1_percent.value, s.top1_percent.se) + " % (" +
               std::to_string(s.top1_agreements) + "/" + std::to_string(s.steps) + ")")
        << Num(FormatEstimate(s.top_overlap_mean, s.top_overlap_mean_se))
        << Num(FormatMetric(s.max_abs_diff));
    for (const uint64_t u : {s.ulp.p50, s.ulp.p99, s.ulp.max}) out << Num(FormatUlp(u));
    out << "</tr>\n";
  }
  out << "</table>\n";
}

void WritePair(const PairConformance& p, double max_nmse, std::ostream& out) {
  const char* verdict = PairVerdictName(p);
  out << "<h2>" << HtmlEscape(p.checkpoint) << " / " << HtmlEscape(p.scenario) << ": <span class=\""
      << VerdictClass(verdict) << "\">" << HtmlEscape(PairVerdictLine(p)) << "</span></h2>\n";
  out << "<p>A: " << HtmlEscape(SideName(p.engine_a, p.config_a))
      << ". B: " << HtmlEscape(SideName(p.engine_b, p.config_b)) << ".</p>\n";
  if (!p.compared) {
    out << "<p>Not compared: " << HtmlEscape(p.reason) << "</p>\n";
    return;
  }
  out << "<p>Measured " << HtmlEscape(DescribeCoverage(p)) << ".</p>\n";
  for (const std::string& note : p.notes) out << "<p>Note: " << HtmlEscape(note) << "</p>\n";
  out << StepMetricsSvg(p, max_nmse) << "\n";
  out << "<table>\n<tr><th>Step</th><th>NMSE</th><th>KLD</th><th>Δp %</th><th>Top-1 A</th>"
         "<th>Top-1 B</th><th>Margin</th><th>|Δ| top-1 + top-2</th><th>Stability</th>"
         "<th>Top-5 overlap</th><th>max |a - b|</th><th>ulp p50</th><th>ulp p99</th>"
         "<th>ulp max</th><th></th></tr>\n";
  for (const StepConformance& s : p.steps) {
    const char* row_class = s.deviates                          ? " class=\"deviates\""
                            : s.stability == Stability::kStable ? ""
                                                                : " class=\"near\"";
    out << "<tr" << row_class << ">" << Num(std::to_string(s.step_index))
        << Num(FormatMetric(s.nmse)) << Num(FormatMetric(s.kl_divergence))
        << Num(FormatMetric(100 * s.delta_p)) << Num(std::to_string(s.top1_a))
        << Num(std::to_string(s.top1_b)) << Num(FormatMetric(s.margin))
        << Num(FormatMetric(s.top_disagreement)) << "<td>" << StabilityName(s.stability) << "</td>"
        << Num(std::to_string(s.top_overlap) + "/" + std::to_string(s.top_count))
        << Num(FormatMetric(s.max_abs_diff));
    for (const uint64_t u : {s.ulp.p50, s.ulp.p99, s.ulp.max}) out << Num(FormatUlp(u));
    out << "<td>" << (s.deviates ? "deviates: " + HtmlEscape(DescribeStepDeviation(s)) : "")
        << "</td></tr>\n";
  }
  out << "</table>\n";
}

class HtmlWriter final : public ConformanceExporter {
 public:
  void Write(const RunConformance& c, std::ostream& out) const override {
    const int code = c.ExitCode();
    const char* cls = code == 0 ? "pass" : code == 1 ? "fail" : "none";
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<title>samebits conform</title>\n<style>" << kConformanceStyle
        << "</style>\n</head>\n<body>\n"
        << "<h1>samebits conform: <span class=\"" << cls << "\">" << HtmlEscape(c.headline)
        << "</span></h1>\n"
        << "<p>A (the reference): " << HtmlEscape(c.label_a) << "<br>B: " << HtmlEscape(c.label_b)
        << "<br>Threshold: NMSE &lt;= " << FormatMetric(c.threshold.max_nmse) << " per step.</p>\n"
        << "<p>" << HtmlEscape(kConformanceStatisticsNote) << "</p>\n";
    WriteSummary(c, out);
    for (const PairConformance& p : c.pairs) WritePair(p, c.threshold.max_nmse, out);
    out << "</body>\n</html>\n";
  }
};

}  // namespace

std::unique_ptr<ConformanceExporter> MakeConformanceHtmlExporter() {
  return std::make_unique<HtmlWriter>();
}

}  // namespace samebits::harness::report
