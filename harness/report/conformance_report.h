// Reports of `samebits conform A B` (harness/analysis/run_conformance.h):
// one interface, one file per format (conformance_markdown.cc,
// conformance_html.cc, conformance_json.cc, conformance_junit.cc), each
// formatting the same `RunConformance`. Every string from outside (names of
// checkpoints, scenarios, configurations, engines) is escaped for its format
// (escape.h). Numbers that are not finite (an infinite NMSE, an undefined KL
// divergence) are written "inf" and "nan" in every format, as JSON strings
// in JSON, whose numbers cannot hold them.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/analysis/run_conformance.h"

namespace samebits::harness::report {

class ConformanceExporter {
 public:
  virtual ~ConformanceExporter() = default;
  // Writes the report of `c` to `out`.
  virtual void Write(const RunConformance& c, std::ostream& out) const = 0;
};

// Returns the exporter for `format` ("md" or "markdown", "html", "json",
// "junit"). Throws std::invalid_argument naming the format and the known ones.
std::unique_ptr<ConformanceExporter> MakeConformanceExporter(std::string_view format);

// Writes the report of `c` in `format` to `out`.
void WriteConformanceReport(const RunConformance& c, std::string_view format, std::ostream& out);

// Returns a measurement for a report: shortest round-trip-like "%.6g", or
// "inf", "-inf", "nan".
std::string FormatMetric(double value);

// Returns FormatMetric of the value, or "-" when there is none.
std::string FormatOptionalMetric(const std::optional<double>& value);

// Returns a mean with its standard error, "0.0123 ± 0.0045" (FormatMetric
// for each).
std::string FormatEstimate(double value, double se);

// Returns a probability difference (Δp) or a fraction as percentage
// points with its standard error, "-4.01611 ± 4.2491 %", as
// llama-perplexity prints Δp; `estimate` is in units of probability.
std::string FormatPercentOfProbability(const Estimate& estimate);

// Returns how a report names a pair's stability in a table cell: "stable",
// "fragile (2 of 40 steps)", "unstable (1 of 40 steps)".
std::string StabilityCell(const ConformanceSummary& summary);

// Returns a pair's statistics as plain text, one figure a line: "KLD mean ±
// se: 0.0173197 ± 0.00628317\n...".
std::string DescribeStatistics(const ConformanceSummary& summary);

// Returns where and why a deviating step deviates, for its table row:
// "token 1234 (A 1.5, B 2.25): NMSE 2.10e-03 > 1.00e-04"; "" for a step that
// does not deviate.
std::string DescribeStepDeviation(const StepConformance& step);

// One sentence for the top of a report: how the statistics are estimated
// and what fragile and unstable mean (conformance.h).
inline constexpr const char* kConformanceStatisticsNote =
    "Each mean is given ± its standard error (sample standard deviation / sqrt(n), over the "
    "steps compared); Δp is p_B - p_A of A's top-1 token, in percentage points (RMS Δp's error "
    "by the delta method); same top-1 ± its binomial error. A step is fragile when |a - b| at "
    "A's two largest logits adds up to at least their margin (a token flip is within the "
    "engines' disagreement), unstable when the argmax moved; a pair is its worst step's.";

// Returns how a report names one side of a pair: "samebits-engine 0.1.0,
// reference", "reference" without an engine, "no cell" without either.
std::string SideName(const std::string& engine, const std::string& config);

// The most steps of one pair the Markdown report lists (a pull-request
// comment stays readable); the HTML and JSON reports list every step.
inline constexpr size_t kMarkdownListedSteps = 64;

// Returns the steps of `pair` a short report lists, in step order: every
// step when there are at most `limit`, else the deviating, fragile and
// unstable ones, at most `limit` of them.
std::vector<const StepConformance*> ListedSteps(const PairConformance& pair, size_t limit);

}  // namespace samebits::harness::report
