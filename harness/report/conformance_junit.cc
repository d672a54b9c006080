// The JUnit XML conformance report: one <testcase> per checkpoint and
// scenario. DEVIATES is a <failure> whose message is the verdict line (the
// first deviating step, its worst token and the metric that crossed); a pair
// not compared is <skipped> with the reason; CONFORMS passes. A compared
// pair's statistics are its <system-out>.
#include <ostream>

#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

class JunitWriter final : public ConformanceExporter {
 public:
  void Write(const RunConformance& c, std::ostream& out) const override {
    const size_t tests = c.pairs.size();
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<testsuites name=\"samebits conform\" tests=\"" << tests << "\" failures=\""
        << c.deviate << "\" errors=\"0\" skipped=\"" << c.not_compared << "\">\n"
        << "  <testsuite name=\"" << XmlAttribute(c.label_b + " against " + c.label_a)
        << "\" tests=\"" << tests << "\" failures=\"" << c.deviate << "\" errors=\"0\" skipped=\""
        << c.not_compared << "\">\n";
    for (const PairConformance& p : c.pairs) {
      out << "    <testcase classname=\"" << XmlAttribute("samebits.conform." + p.checkpoint)
          << "\" name=\"" << XmlAttribute(p.scenario) << "\"";
      out << ">\n";
      if (!p.compared) {
        out << "      <skipped message=\"" << XmlAttribute("not compared: " + p.reason) << "\"/>\n";
      } else if (!p.summary.Conforms()) {
        out << "      <failure type=\"DEVIATES\" message=\"" << XmlAttribute(PairVerdictLine(p))
            << "\">" << XmlEscape(DescribeCoverage(p), /*attribute=*/false) << "</failure>\n";
      }
      if (p.compared) {
        // The statistics, for a passing pair too: CI keeps them beside the test.
        out << "      <system-out>"
            << XmlEscape(PairVerdictLine(p) + "\n" + DescribeStatistics(p.summary),
                         /*attribute=*/false)
            << "</system-out>\n";
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
