// The table of conformance report formats (conformance_report.h).
#include "harness/report/conformance_report.h"

#include <cmath>
#include <cstdio>
#include <iterator>

#include "harness/report/report_formats.h"

namespace samebits::harness::report {

// Each format's factory, defined in its conformance_<name>.cc.
std::unique_ptr<ConformanceExporter> MakeConformanceMarkdownExporter();
std::unique_ptr<ConformanceExporter> MakeConformanceHtmlExporter();
std::unique_ptr<ConformanceExporter> MakeConformanceJsonExporter();
std::unique_ptr<ConformanceExporter> MakeConformanceJunitExporter();

namespace {

struct ConformanceFormat {
  std::string_view name;  // a name of report_formats.h's list
  std::unique_ptr<ConformanceExporter> (*make)();
};

constexpr ConformanceFormat kConformanceFormats[] = {
    {"md", MakeConformanceMarkdownExporter},
    {"html", MakeConformanceHtmlExporter},
    {"json", MakeConformanceJsonExporter},
    {"junit", MakeConformanceJunitExporter},
};
static_assert(FormatsAreListed(kConformanceFormats) &&
                  std::size(kConformanceFormats) == kReportFormats.size(),
              "a conformance report is written in every format of report_formats.h");

}  // namespace

std::unique_ptr<ConformanceExporter> MakeConformanceExporter(std::string_view format) {
  return FindFormatRow(kConformanceFormats, format).make();
}

void WriteConformanceReport(const RunConformance& c, std::string_view format, std::ostream& out) {
  MakeConformanceExporter(format)->Write(c, out);
}

std::string FormatOptionalMetric(const std::optional<double>& value) {
  return value ? FormatMetric(*value) : "-";
}

std::string FormatMetric(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string FormatEstimate(double value, double se) {
  return FormatMetric(value) + " ± " + FormatMetric(se);
}

std::string FormatPercentOfProbability(const Estimate& estimate) {
  return FormatEstimate(100 * estimate.value, 100 * estimate.se) + " %";
}

std::string StabilityCell(const ConformanceSummary& summary) {
  const std::string of = " of " + std::to_string(summary.steps) + " steps)";
  switch (summary.stability) {
    case Stability::kStable:
      return "stable";
    case Stability::kFragile:
      return "fragile (" + std::to_string(summary.fragile_steps) + of;
    case Stability::kUnstable:
      return "unstable (" + std::to_string(summary.unstable_steps) + of;
  }
  return "";
}

std::string DescribeStatistics(const ConformanceSummary& s) {
  return "NMSE mean ± se: " + FormatEstimate(s.mean_nmse, s.mean_nmse_se) +
         "\nNMSE max: " + FormatMetric(s.max_nmse) +
         "\nKLD mean ± se: " + FormatEstimate(s.kld_mean, s.kld_mean_se) +
         "\nKLD median: " + FormatMetric(s.kld_median) +
         "\nKLD p99 / p99.9 / max: " + FormatMetric(s.kld_p99) + " / " + FormatMetric(s.kld_p999) +
         " / " + FormatMetric(s.kld_max) +
         "\nΔp mean ± se: " + FormatPercentOfProbability(s.delta_p_mean) +
         "\nRMS Δp ± se: " + FormatPercentOfProbability(s.delta_p_rms) +
         "\nSame top-1 ± se: " + FormatEstimate(s.top1_percent.value, s.top1_percent.se) + " % (" +
         std::to_string(s.top1_agreements) + " of " + std::to_string(s.steps) + " steps)" +
         "\nTop-5 overlap mean ± se: " + FormatEstimate(s.top_overlap_mean, s.top_overlap_mean_se) +
         "\nSteps fragile / unstable: " + std::to_string(s.fragile_steps) + " / " +
         std::to_string(s.unstable_steps) + "\n";
}

std::string DescribeStepDeviation(const StepConformance& step) {
  if (!step.deviates) return "";
  if (step.worst_token < 0) return step.why;
  return "token " + std::to_string(step.worst_token) + " (A " + FormatMetric(step.worst_a) +
         ", B " + FormatMetric(step.worst_b) + "): " + step.why;
}

std::string SideName(const std::string& engine, const std::string& config) {
  if (config.empty()) return "no cell";
  return engine.empty() ? config : engine + ", " + config;
}

std::vector<const StepConformance*> ListedSteps(const PairConformance& pair, size_t limit) {
  std::vector<const StepConformance*> listed;
  const bool all = pair.steps.size() <= limit;
  for (const StepConformance& s : pair.steps) {
    if (listed.size() == limit) break;
    if (all || s.deviates || s.stability != Stability::kStable) listed.push_back(&s);
  }
  return listed;
}

}  // namespace samebits::harness::report
