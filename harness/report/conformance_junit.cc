// The JUnit XML conformance report: one <testcase> per checkpoint and
// scenario. DEVIATES is a <failure> naming the first deviating step; a pair
// not compared is <skipped> with the reason; CONFORMS passes.
#include <ostream>

#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

std::string Attr(const std::string& s) {
  return XmlEscape(s, /*attribute=*/true);
}

std::string FailureMessage(const PairConformance& p) {
  for (const StepConformance& s : p.steps) {
    if (s.deviates) return "DEVIATES from step " + std::to_string(s.step_index) + ": " + s.why;
  }
  return "DEVIATES";
}

class JunitWriter final : public ConformanceExporter {
 public:
  std::string_view Extension() const override { return "xml"; }
  void Write(const RunConformance& c, std::ostream& out) const override {
    const size_t tests = c.pairs.size();
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<testsuites name=\"samebits conform\" tests=\"" << tests << "\" failures=\""
        << c.deviate << "\" errors=\"0\" skipped=\"" << c.not_compared << "\">\n"
        << "  <testsuite name=\"" << Attr(c.label_b + " against " + c.label_a) << "\" tests=\""
        << tests << "\" failures=\"" << c.deviate << "\" errors=\"0\" skipped=\"" << c.not_compared
        << "\">\n";
    for (const PairConformance& p : c.pairs) {
      out << "    <testcase classname=\"" << Attr("samebits.conform." + p.checkpoint)
          << "\" name=\"" << Attr(p.scenario) << "\"";
      if (p.compared && p.summary.Conforms()) {
        out << "/>\n";
        continue;
      }
      out << ">\n";
      if (!p.compared) {
        out << "      <skipped message=\"" << Attr("not compared: " + p.reason) << "\"/>\n";
      } else {
        out << "      <failure type=\"DEVIATES\" message=\"" << Attr(FailureMessage(p)) << "\">"
            << XmlEscape(DescribeCoverage(p), /*attribute=*/false) << "</failure>\n";
      }
      out << "    </testcase>\n";
    }
    out << "  </testsuite>\n</testsuites>\n";
  }
};

}  // namespace

std::unique_ptr<ConformanceExporter> MakeConformanceJunitExporter() {
  return std::make_unique<JunitWriter>();
}

}  // namespace samebits::harness::report
