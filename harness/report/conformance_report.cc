// The table of conformance report formats (conformance_report.h).
#include "harness/report/conformance_report.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace samebits::harness::report {

// Each format's factory, defined in its conformance_<name>.cc.
std::unique_ptr<ConformanceExporter> MakeConformanceMarkdownExporter();
std::unique_ptr<ConformanceExporter> MakeConformanceHtmlExporter();
std::unique_ptr<ConformanceExporter> MakeConformanceJsonExporter();
std::unique_ptr<ConformanceExporter> MakeConformanceJunitExporter();

namespace {

struct Format {
  const char* name;
  const char* alias;  // another accepted name, or nullptr
  std::unique_ptr<ConformanceExporter> (*make)();
};

constexpr Format kFormats[] = {
    {"md", "markdown", MakeConformanceMarkdownExporter},
    {"html", nullptr, MakeConformanceHtmlExporter},
    {"json", nullptr, MakeConformanceJsonExporter},
    {"junit", nullptr, MakeConformanceJunitExporter},
};

}  // namespace

std::unique_ptr<ConformanceExporter> MakeConformanceExporter(std::string_view format) {
  std::string known;
  for (const Format& f : kFormats) {
    if (format == f.name || (f.alias != nullptr && format == f.alias)) return f.make();
    known += std::string(known.empty() ? "" : ", ") + f.name;
  }
  throw std::invalid_argument("unknown report format '" + std::string(format) +
                              "' (known formats: " + known + ")");
}

void WriteConformanceReport(const RunConformance& c, std::string_view format, std::ostream& out) {
  MakeConformanceExporter(format)->Write(c, out);
}

std::string FormatMetric(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
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
    if (all || s.deviates) listed.push_back(&s);
  }
  return listed;
}

}  // namespace samebits::harness::report
