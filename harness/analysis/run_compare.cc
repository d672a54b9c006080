// Comparing two runs (run_compare.h).
#include "harness/analysis/run_compare.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/analysis/batch.h"

namespace samebits::harness {
namespace {

std::string CellKey(const CellResult& c) {
  return c.checkpoint + '\t' + c.scenario + '\t' + c.config.name;
}

// Returns why cells `x` (of `label_a`) and `y` (of `label_b`) cannot be
// evidence either way, or "" when their outputs can be compared: only two
// cells that ran the same scenario and both produced steps can agree.
std::string WhyNotComparable(const CellResult& x, const CellResult& y, const std::string& label_a,
                             const std::string& label_b) {
  if (const std::string other = ScenarioContentMismatch(x, y); !other.empty())
    return other + " (two different scenarios under one name)";
  if (!RanAndCompared(x.code) || !RanAndCompared(y.code)) {
    const CellResult& idle = RanAndCompared(x.code) ? y : x;
    return std::string(ResultCodeName(idle.code)) + " in " +
           (RanAndCompared(x.code) ? label_b : label_a) +
           (idle.message.empty() ? "" : ": " + idle.message);
  }
  if (x.steps.empty() || y.steps.empty())
    return "no step in " + (x.steps.empty() ? label_a : label_b) +
           ": a cell without output is no evidence of agreement";
  return "";
}

std::string Short(const std::string& revision) {
  return revision.substr(0, 12);
}

std::string MathText(const MathLibraryInfo& m) {
  return m.name + " " + m.version + " (fingerprint " + m.fingerprint + ")";
}

// Returns the fingerprint of the run's portable math (from any portable
// cell), or "" when no portable cell said hello.
std::string PortableFingerprint(const RunResult& run) {
  for (const CellResult& c : run.cells) {
    if (c.config.math == "portable" && c.math) return c.math->fingerprint;
  }
  return "";
}

// Returns the build revisions of a run, distinct, in order.
std::vector<std::string> Revisions(const RunResult& run) {
  std::vector<std::string> out;
  for (const CellResult& c : run.cells) {
    if (!c.build) continue;
    const std::string r = c.build->revision + (c.build->dirty ? "-dirty" : "");
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "unknown" : out;
}

// A cell's device for a person; a cell without one ran on its machine's CPU.
std::string DeviceText(const std::optional<DeviceInfo>& device) {
  return device ? DescribeDevice(*device) : "the CPU";
}

struct Cause {
  CompareCause cause;
  std::string detail;
};

// The first cause (in kCompareCauses order) that explains why cells `x`
// (of run `a`) and `y` (of run `b`) differ.
Cause JudgeCause(const RunResult& a, const CellResult& x, const RunResult& b, const CellResult& y) {
  if (x.build && y.build && x.build->revision != y.build->revision)
    return {CompareCause::kCode,
            "revision " + Short(x.build->revision) + " vs " + Short(y.build->revision)};
  const std::string pa = PortableFingerprint(a), pb = PortableFingerprint(b);
  if (!pa.empty() && !pb.empty() && pa != pb)
    return {CompareCause::kCode, "portable math fingerprint " + pa + " vs " + pb};
  if (x.build && y.build &&
      (x.build->compiler != y.build->compiler || x.build->flags != y.build->flags))
    return {CompareCause::kCompiler, "compiler " + x.build->compiler + " [" + x.build->flags +
                                         "] vs " + y.build->compiler + " [" + y.build->flags + "]"};
  if (!x.isa_used.empty() && !y.isa_used.empty() && x.isa_used != y.isa_used)
    return {CompareCause::kIsa, "ISA " + x.isa_used + " vs " + y.isa_used};
  if (x.config.math != "portable" && x.math && y.math &&
      (x.math->name != y.math->name || x.math->version != y.math->version ||
       x.math->fingerprint != y.math->fingerprint))
    return {CompareCause::kMathLibrary, MathText(*x.math) + " vs " + MathText(*y.math)};
  if (x.device != y.device)
    return {CompareCause::kDevice, DeviceText(x.device) + " vs " + DeviceText(y.device)};
  if (a.machine.arch != b.machine.arch)
    return {CompareCause::kArchitecture, a.machine.arch + " vs " + b.machine.arch};
  return {CompareCause::kUnexplained, "same build, ISA, math library, device and architecture"};
}

// How the two runs differ as wholes, whether or not any cell does.
std::vector<std::string> Context(const RunComparison& cmp, const RunResult& a, const RunResult& b) {
  std::vector<std::string> out;
  const std::string A = cmp.label_a, B = cmp.label_b;
  const auto ra = Revisions(a), rb = Revisions(b);
  out.push_back((ra == rb ? "Same build revision: " + Join(ra)
                          : "The builds differ: revision " + Join(ra) + " (" + A + ") vs " +
                                Join(rb) + " (" + B + ")") +
                ".");
  out.push_back((a.machine.arch == b.machine.arch ? "Same architecture: " + a.machine.arch
                                                  : "Architectures: " + a.machine.arch + " (" + A +
                                                        ") vs " + b.machine.arch + " (" + B + ")") +
                ".");
  const std::string pa = PortableFingerprint(a), pb = PortableFingerprint(b);
  if (pa != pb)
    out.push_back("Portable math fingerprints: " + pa + " (" + A + ") vs " + pb + " (" + B +
                  "): the portable math's code differs.");
  std::set<std::string> la, lb;
  for (const CellResult& c : a.cells)
    if (c.math && c.config.math != "portable") la.insert(MathText(*c.math));
  for (const CellResult& c : b.cells)
    if (c.math && c.config.math != "portable") lb.insert(MathText(*c.math));
  if (la != lb)
    out.push_back("Math libraries: " + Join({la.begin(), la.end()}) + " (" + A + ") vs " +
                  Join({lb.begin(), lb.end()}) + " (" + B + ").");
  return out;
}

std::string Headline(const RunComparison& c) {
  const int compared = c.agree + c.differ;
  const std::string not_compared =
      c.not_compared == 0 ? "" : " (" + std::to_string(c.not_compared) + " not compared)";
  if (compared == 0) return "Nothing was compared: no cell ran on both sides" + not_compared + ".";
  if (c.differ == 0)
    return "All " + std::to_string(compared) + " compared cells agree bit for bit" + not_compared +
           ".";
  std::string counts;
  const CompareCauseInfo* top = nullptr;
  for (size_t k = 0; k < kCompareCauses.size(); ++k) {
    if (c.by_cause[k] == 0) continue;
    if (top == nullptr) top = &kCompareCauses[k];
    counts += (counts.empty() ? "" : ", ") + std::string(kCompareCauses[k].name) + ": " +
              std::to_string(c.by_cause[k]);
  }
  return std::to_string(c.differ) + " of " + std::to_string(compared) + " compared cells differ" +
         not_compared + "; most likely because " + top->title + " (" + counts + ").";
}

}  // namespace

std::string WeightsDifference(const CellResult& x, const CellResult& y) {
  if (x.weights_xxh3.empty() || y.weights_xxh3.empty() || x.weights_xxh3 == y.weights_xxh3)
    return "";
  return "weights xxh3 " + x.weights_xxh3 + " vs " + y.weights_xxh3;
}

void RefuseDifferingCopies(const RunResult& run, const std::string& label) {
  std::map<std::string, const CellResult*> seen;
  for (const CellResult& c : run.cells) {
    const auto [it, fresh] = seen.emplace(CellKey(c), &c);
    if (fresh) continue;
    const CellResult& first = *it->second;
    if (first.code != c.code || first.weights_xxh3 != c.weights_xxh3 ||
        first.scenario_xxh3 != c.scenario_xxh3 || FirstStepDifference(first.steps, c.steps)) {
      throw std::invalid_argument(label + " holds two differing copies of the cell " +
                                  c.checkpoint + " " + c.scenario + " " + c.config.name +
                                  ": it cannot be compared (which copy is the run's?)");
    }
  }
}

const CompareCauseInfo& CauseInfo(CompareCause cause) {
  return kCompareCauses[static_cast<size_t>(cause)];
}

int RunComparison::ExitCode() const {
  if (agree + differ == 0) return 2;
  return differ == 0 ? 0 : 1;
}

RunComparison CompareRuns(const RunResult& a, const RunResult& b, const std::string& label_a,
                          const std::string& label_b, const CompareOptions& options) {
  RunComparison out;
  out.label_a = label_a;
  out.label_b = label_b;
  RefuseDifferingCopies(a, label_a);
  RefuseDifferingCopies(b, label_b);
  std::map<std::string, const CellResult*> in_b;
  for (const CellResult& c : b.cells) in_b.emplace(CellKey(c), &c);
  std::set<std::string> matched, seen_a;
  for (const CellResult& x : a.cells) {
    // A second, identical copy of a cell (RefuseDifferingCopies) is not
    // counted twice.
    if (!seen_a.insert(CellKey(x)).second) continue;
    CellComparison cc;
    cc.checkpoint = x.checkpoint;
    cc.scenario = x.scenario;
    cc.config = x.config.name;
    cc.a = x;
    auto it = in_b.find(CellKey(x));
    if (it == in_b.end()) {
      cc.reason = "only in " + label_a;
    } else {
      matched.insert(CellKey(x));
      const CellResult& y = *it->second;
      cc.b = y;
      const std::string weights = WeightsDifference(x, y);
      if (const std::string why = WhyNotComparable(x, y, label_a, label_b); !why.empty()) {
        cc.reason = why;
      } else if (!weights.empty()) {
        // Other weights under one checkpoint name: never "agree", and never
        // blamed on the code.
        cc.outcome = CellOutcome::kDiffer;
        cc.cause = CompareCause::kWeights;
        cc.cause_detail = weights;
        cc.step = FirstStepDifference(x.steps, y.steps)
                      .value_or(StepDifference{0, x.steps[0].kind, x.steps[0].position,
                                               "the outputs are equal, the inputs are not"});
      } else if (auto d = FirstStepDifference(x.steps, y.steps)) {
        cc.outcome = CellOutcome::kDiffer;
        cc.step = *d;
        const std::string place_a = StepBatchPlace(x, d->index);
        const std::string place_b = StepBatchPlace(y, d->index);
        cc.batch_place = PlaceInRuns(place_a, place_b);
        if (!x.traces.empty() && !y.traces.empty())
          cc.trace = FirstTraceDifference(x.traces, y.traces);
        if (options.read_dumps)
          cc.logits = CompareStepLogits(x, y, d->index, options.dump_base_dir);
        const Cause cause = JudgeCause(a, x, b, y);
        cc.cause = cause.cause;
        cc.cause_detail = cause.detail;
      } else {
        cc.outcome = CellOutcome::kAgree;
      }
    }
    out.cells.push_back(std::move(cc));
  }
  for (const CellResult& y : b.cells) {
    if (!matched.insert(CellKey(y)).second) continue;
    CellComparison cc;
    cc.checkpoint = y.checkpoint;
    cc.scenario = y.scenario;
    cc.config = y.config.name;
    cc.b = y;
    cc.reason = "only in " + label_b;
    out.cells.push_back(std::move(cc));
  }
  for (const CellComparison& cc : out.cells) {
    switch (cc.outcome) {
      case CellOutcome::kAgree:
        ++out.agree;
        break;
      case CellOutcome::kDiffer:
        ++out.differ;
        ++out.by_cause[static_cast<size_t>(cc.cause)];
        break;
      case CellOutcome::kNotCompared:
        ++out.not_compared;
        break;
    }
  }
  out.context = Context(out, a, b);
  out.headline = Headline(out);
  return out;
}

std::string DescribeCellDifference(const CellComparison& c) {
  std::ostringstream s;
  s << c.checkpoint << " " << c.scenario << " " << c.config << ": " << CauseInfo(c.cause).name
    << " (" << c.cause_detail << "); first differs at step " << c.step->index << " ("
    << c.step->kind << ", position " << c.step->position << ")";
  if (!c.batch_place.empty()) s << " \u2014 " << c.batch_place;
  s << ": " << c.step->detail;
  if (c.logits) s << "; " << DescribeLogitDifference(*c.logits);
  if (c.trace) {
    s << "; first diverging trace: layer " << c.trace->layer << ", op " << c.trace->op
      << " at position " << c.trace->position;
  }
  return s.str();
}

std::string FormatComparison(const RunComparison& cmp) {
  std::ostringstream s;
  s << "A: " << cmp.label_a << "\nB: " << cmp.label_b << "\n" << cmp.headline << "\n";
  for (const std::string& line : cmp.context) s << "  " << line << "\n";
  for (const CellComparison& c : cmp.cells) {
    if (c.outcome == CellOutcome::kDiffer) s << "DIFFERS  " << DescribeCellDifference(c) << "\n";
  }
  for (const CellComparison& c : cmp.cells) {
    if (c.outcome == CellOutcome::kNotCompared)
      s << "NOT COMPARED  " << c.checkpoint << " " << c.scenario << " " << c.config << ": "
        << c.reason << "\n";
  }
  return s.str();
}

RunResult ComparisonAsRun(const RunComparison& cmp, const RunResult& a) {
  RunResult run;
  run.started_at = a.started_at;
  run.machine = a.machine;
  for (const CellComparison& c : cmp.cells) {
    for (int side = 0; side < 2; ++side) {
      const std::optional<CellResult>& from = side == 0 ? c.a : c.b;
      CellResult cell = from ? *from : CellResult{};
      cell.checkpoint = c.checkpoint;
      cell.scenario = c.scenario + " " + c.config;
      cell.config.name = side == 0 ? "A" : "B";
      cell.dump_path.clear();
      cell.dump.reset();
      cell.message.clear();
      switch (c.outcome) {
        case CellOutcome::kAgree:
          cell.code = ResultCode::kPass;
          break;
        case CellOutcome::kDiffer:
          cell.code = side == 0 ? ResultCode::kPass : ResultCode::kFail;
          if (side == 1) cell.message = DescribeCellDifference(c);
          break;
        case CellOutcome::kNotCompared:
          cell.code = ResultCode::kUnsupported;
          cell.message = "not compared: " + c.reason;
          cell.steps.clear();
          cell.traces.clear();
          break;
      }
      run.cells.push_back(std::move(cell));
    }
  }
  Diagnosis& d = run.diagnosis;
  d.headline = cmp.headline;
  d.details.push_back("A: " + cmp.label_a);
  d.details.push_back("B: " + cmp.label_b);
  d.details.insert(d.details.end(), cmp.context.begin(), cmp.context.end());
  std::optional<CompareCause> top;
  for (const CellComparison& c : cmp.cells) {
    if (c.outcome != CellOutcome::kDiffer) continue;
    if (!top || c.cause < *top) top = c.cause;
    d.details.push_back(DescribeCellDifference(c));
    Divergence div;
    div.checkpoint = c.checkpoint;
    div.scenario = c.scenario + " " + c.config;
    div.config_a = "A";
    div.config_b = "B";
    div.step_index = c.step->index;
    div.kind = c.step->kind;
    div.position = c.step->position;
    div.detail = c.step->detail + "; " + CauseInfo(c.cause).name + ": " + c.cause_detail;
    if (c.logits) div.detail += "; " + DescribeLogitDifference(*c.logits);
    div.batch_place = c.batch_place;
    if (c.trace) {
      div.layer = c.trace->layer;
      div.op = c.trace->op;
    }
    d.divergences.push_back(std::move(div));
  }
  for (const CellComparison& c : cmp.cells) {
    if (c.outcome == CellOutcome::kNotCompared)
      d.details.push_back("Not compared: " + c.checkpoint + " " + c.scenario + " " + c.config +
                          ": " + c.reason);
  }
  // The report's diagnosis kind: a code change and a math library keep their
  // gate names; any other cause means the same outputs were expected and
  // the bits differ.
  if (!top) {
    d.kind = Diagnosis::Kind::kAllAgree;
  } else if (*top == CompareCause::kCode) {
    d.kind = Diagnosis::Kind::kCodeChanged;
  } else if (*top == CompareCause::kMathLibrary) {
    d.kind = Diagnosis::Kind::kMathLibraryDiffers;
  } else {
    d.kind = Diagnosis::Kind::kIdentityBroken;
  }
  return run;
}

}  // namespace samebits::harness
