#include "harness/report/conformance_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

constexpr double kWidth = 640, kLeft = 64, kRight = 16, kTitle = 18, kPlot = 110, kAxis = 34;
constexpr const char* kPointColor = "#1f77b4";
constexpr const char* kDeviatesColor = "#a31515";

// A coordinate with one decimal: enough for a screen, and the same text on
// every machine (no long tails of digits from the arithmetic).
std::string Coordinate(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// The decades a panel spans: from the smallest positive value's down to the
// largest's (and the threshold's) up, at least one.
struct Decades {
  int low = -1, high = 0;
};

Decades SpanOf(const std::vector<double>& values, double threshold) {
  double smallest = 0, largest = 0;
  for (double v : values) {
    if (!std::isfinite(v) || v <= 0) continue;
    smallest = smallest == 0 ? v : std::min(smallest, v);
    largest = std::max(largest, v);
  }
  if (std::isfinite(threshold) && threshold > 0) {
    smallest = smallest == 0 ? threshold : std::min(smallest, threshold);
    largest = std::max(largest, threshold);
  }
  Decades d;
  if (largest == 0) return d;  // every value 0 (or not finite)
  d.low = static_cast<int>(std::floor(std::log10(smallest)));
  d.high = static_cast<int>(std::ceil(std::log10(largest)));
  if (d.high <= d.low) d.high = d.low + 1;
  return d;
}

// One panel: `values[i]` is step `steps[i].step_index`'s measurement.
// Returns the panel's height.
double Panel(std::ostringstream& svg, double top, const char* name,
             const std::vector<StepConformance>& steps, const std::vector<double>& values,
             double threshold) {
  const Decades d = SpanOf(values, threshold);
  const double plot_top = top + kTitle, plot_bottom = plot_top + kPlot;
  auto y_of = [&](double v) {
    if (v <= 0) return plot_bottom;
    const double at = (std::log10(v) - d.low) / (d.high - d.low);
    return plot_bottom - std::clamp(at, 0.0, 1.0) * kPlot;
  };
  int first = steps.front().step_index, last = first;
  for (const StepConformance& s : steps) {
    first = std::min(first, s.step_index);
    last = std::max(last, s.step_index);
  }
  auto x_of = [&](int step) {
    if (last == first) return (kLeft + kWidth - kRight) / 2;
    return kLeft + static_cast<double>(step - first) / (last - first) * (kWidth - kLeft - kRight);
  };
  svg << "<text x=\"4\" y=\"" << Coordinate(top + 13) << "\" font-weight=\"bold\">" << name
      << " per step (log scale)</text>\n";
  // The decades, labelled; at most about eight labels however wide the span.
  const int every = std::max(1, (d.high - d.low + 7) / 8);
  for (int e = d.low; e <= d.high; e += every) {
    const std::string y = Coordinate(y_of(std::pow(10.0, e)));
    svg << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << y << "\" y2=\""
        << y << "\" stroke=\"#eee\"/>\n"
        << "<text x=\"" << kLeft - 4 << "\" y=\"" << y << "\" dy=\"4\" text-anchor=\"end\">1e" << e
        << "</text>\n";
  }
  if (std::isfinite(threshold) && threshold > 0) {
    const std::string y = Coordinate(y_of(threshold));
    svg << "<line class=\"threshold\" x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\""
        << y << "\" y2=\"" << y
        << "\" stroke=\"#a31515\" stroke-dasharray=\"4 3\"><title>threshold "
        << FormatMetric(threshold) << "</title></line>\n";
  }
  // The curve through every finite value (0 on the floor), then the points.
  std::string points;
  std::vector<int> not_finite;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!std::isfinite(values[i])) {
      not_finite.push_back(steps[i].step_index);
      continue;
    }
    points += (points.empty() ? "" : " ") + Coordinate(x_of(steps[i].step_index)) + "," +
              Coordinate(y_of(values[i]));
  }
  if (!points.empty()) {
    svg << "<polyline points=\"" << points << "\" fill=\"none\" stroke=\"#9cc3e4\"/>\n";
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    const StepConformance& s = steps[i];
    const char* color = s.deviates ? kDeviatesColor : kPointColor;
    svg << "<circle cx=\"" << Coordinate(x_of(s.step_index)) << "\" cy=\""
        << Coordinate(y_of(values[i])) << "\" r=\"3\" fill=\"" << (values[i] > 0 ? color : "white")
        << "\" stroke=\"" << color << "\"><title>step " << s.step_index << ": " << name << " "
        << FormatMetric(values[i]) << (s.deviates ? " (deviates)" : "") << "</title></circle>\n";
  }
  svg << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\""
      << Coordinate(plot_bottom) << "\" y2=\"" << Coordinate(plot_bottom)
      << "\" stroke=\"#333\"/>\n";
  for (int step : {first, last}) {
    svg << "<text x=\"" << Coordinate(x_of(step)) << "\" y=\"" << Coordinate(plot_bottom + 14)
        << "\" text-anchor=\"middle\">step " << step << "</text>\n";
    if (first == last) break;
  }
  double height = kTitle + kPlot + kAxis;
  if (!not_finite.empty()) {
    std::string list;
    for (int step : not_finite) list += (list.empty() ? "" : ", ") + std::to_string(step);
    svg << "<text x=\"" << kLeft << "\" y=\"" << Coordinate(plot_bottom + 30) << "\" fill=\""
        << kDeviatesColor << "\">not finite at step" << (not_finite.size() > 1 ? "s " : " ")
        << HtmlEscape(list) << " (not drawn)</text>\n";
    height += 14;
  }
  return height;
}

}  // namespace

std::string StepMetricsSvg(const PairConformance& pair, double max_nmse) {
  if (!pair.compared || pair.steps.empty()) return "";
  std::vector<double> nmse, kld;
  for (const StepConformance& s : pair.steps) {
    nmse.push_back(s.nmse);
    kld.push_back(s.kl_divergence);
  }
  std::ostringstream body;
  double height = 6;
  height += Panel(body, height, "NMSE", pair.steps, nmse, max_nmse);
  height += Panel(body, height, "KLD", pair.steps, kld, 0);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"steps\" width=\"" << kWidth
      << "\" height=\"" << Coordinate(height)
      << "\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\"><title>NMSE and KL "
         "divergence per step</title>\n"
      << body.str() << "</svg>";
  return svg.str();
}

}  // namespace samebits::harness::report
