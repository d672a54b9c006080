// The JUnit XML report, the format CI systems display: one <testsuite> per
// (checkpoint, scenario), one <testcase> per configuration. FAIL is
// <failure> (the numbers are wrong), UNRESOLVED and TIMEOUT are <error>
// (the child did not give an answer), UNSUPPORTED is <skipped>; PASS is a
// passing case. Everything from outside is XML-escaped with the
// control characters XML 1.0 forbids removed, because one stray byte in a
// stderr tail would make the whole file unreadable to the CI system.
#include <cstdio>
#include <ostream>
#include <string>

#include "harness/report/escape.h"
#include "harness/report/exporter.h"

namespace samebits::harness::report {
namespace {

enum class Outcome { kPassed, kFailure, kError, kSkipped };

Outcome OutcomeOf(ResultCode code) {
  switch (code) {
    case ResultCode::kPass:
    case ResultCode::kKnown:
      return Outcome::kPassed;
    case ResultCode::kFail:
    case ResultCode::kFixed:
      return Outcome::kFailure;
    case ResultCode::kUnresolved:
    case ResultCode::kTimeout:
      return Outcome::kError;
    case ResultCode::kUnsupported:
      return Outcome::kSkipped;
  }
  return Outcome::kError;
}

struct Tally {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double ms = 0;
  void Add(const CellResult& c) {
    ++tests;
    ms += c.elapsed_ms;
    switch (OutcomeOf(c.code)) {
      case Outcome::kPassed:
        break;
      case Outcome::kFailure:
        ++failures;
        break;
      case Outcome::kError:
        ++errors;
        break;
      case Outcome::kSkipped:
        ++skipped;
        break;
    }
  }
};

// Returns seconds with three decimals, as JUnit's `time` attribute wants.
std::string Seconds(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", ms / 1000.0);
  return buf;
}

void WriteTallyAttributes(const Tally& t, std::ostream& out) {
  out << " tests=\"" << t.tests << "\" failures=\"" << t.failures << "\" errors=\"" << t.errors
      << "\" skipped=\"" << t.skipped << "\" time=\"" << Seconds(t.ms) << "\"";
}

std::string CaseMessage(const ReportModel& m, const CellGroup& g, const ConfigRow& r) {
  const CellResult& c = *r.cell;
  std::string message = std::string(ResultCodeName(c.code));
  if (!c.message.empty()) message += ": " + c.message;
  const std::string divergence = FirstDivergenceText(*m.run, g, r);
  if (!divergence.empty()) message += " (first divergence: " + divergence + ")";
  return message;
}

void WriteTestCase(const ReportModel& m, const CellGroup& g, const ConfigRow& r,
                   std::ostream& out) {
  const CellResult& c = *r.cell;
  out << "    <testcase classname=\"" << XmlAttribute("samebits." + g.checkpoint + "." + g.scenario)
      << "\" name=\"" << XmlAttribute(c.config.name) << "\" time=\"" << Seconds(c.elapsed_ms)
      << "\"";
  const Outcome outcome = OutcomeOf(c.code);
  if (outcome == Outcome::kPassed && c.stderr_tail.empty()) {
    out << "/>\n";
    return;
  }
  out << ">\n";
  const std::string message = CaseMessage(m, g, r);
  const std::string details = "exit code " + std::to_string(c.exit_code) +
                              (c.signal ? ", signal " + std::to_string(c.signal) : "") + ", " +
                              std::to_string(c.steps.size()) + " steps";
  switch (outcome) {
    case Outcome::kPassed:
      break;
    case Outcome::kFailure:
      out << "      <failure type=\"" << ResultCodeName(c.code) << "\" message=\""
          << XmlAttribute(message) << "\">" << XmlText(details) << "</failure>\n";
      break;
    case Outcome::kError:
      out << "      <error type=\"" << ResultCodeName(c.code) << "\" message=\""
          << XmlAttribute(message) << "\">" << XmlText(details) << "</error>\n";
      break;
    case Outcome::kSkipped:
      out << "      <skipped message=\"" << XmlAttribute(message) << "\"/>\n";
      break;
  }
  if (!c.stderr_tail.empty()) {
    out << "      <system-err>" << XmlText(c.stderr_tail) << "</system-err>\n";
  }
  out << "    </testcase>\n";
}

class JunitExporter final : public Exporter {
 public:
  void Write(const ReportModel& m, std::ostream& out) const override {
    const RunResult& run = *m.run;
    Tally total;
    for (const CellResult& c : run.cells) total.Add(c);
    total.ms = run.elapsed_ms;  // the run's wall time, not the children's sum
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"samebits run " << run.run_id << "\"";
    WriteTallyAttributes(total, out);
    out << ">\n";
    for (const CellGroup& g : m.groups) {
      Tally t;
      for (const ConfigRow& r : g.rows) t.Add(*r.cell);
      out << "  <testsuite name=\"" << XmlAttribute(g.checkpoint + " / " + g.scenario) << "\"";
      WriteTallyAttributes(t, out);
      out << " timestamp=\"" << XmlAttribute(run.started_at) << "\">\n";
      for (const ConfigRow& r : g.rows) WriteTestCase(m, g, r, out);
      out << "  </testsuite>\n";
    }
    out << "</testsuites>\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> MakeJunitExporter() {
  return std::make_unique<JunitExporter>();
}

}  // namespace samebits::harness::report
