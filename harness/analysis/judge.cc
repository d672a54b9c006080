// The gate's analysis (judge.h).
#include "harness/analysis/judge.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "harness/analysis/compare.h"

namespace samebits::harness {
namespace {

bool Ran(const CellResult& c) {
  return c.code == ResultCode::kPass || c.code == ResultCode::kFail;
}

std::string MathName(const MathLibraryInfo& m) {
  return m.name + " " + m.version + " (fingerprint " + m.fingerprint + ")";
}

bool SameLibrary(const MathLibraryInfo& a, const MathLibraryInfo& b) {
  return a.name == b.name && a.version == b.version && a.fingerprint == b.fingerprint;
}

// The severity order of the diagnosis kinds, most important first.
int Rank(Diagnosis::Kind k) {
  switch (k) {
    case Diagnosis::Kind::kIdentityBroken:
      return 0;
    case Diagnosis::Kind::kMathLibraryDiffers:
      return 1;
    case Diagnosis::Kind::kCodeChanged:
      return 2;
    case Diagnosis::Kind::kNoReference:
      return 3;
    case Diagnosis::Kind::kChildFailures:
      return 4;
    case Diagnosis::Kind::kAllAgree:
      return 5;
  }
  return 5;
}

// Returns the `samebits bisect` command to print, with the user's flags.
std::string BisectCommand(const JudgeOptions& options) {
  return options.bisect_command.empty() ? options.samebits + " bisect" : options.bisect_command;
}

}  // namespace

std::vector<AgreementGroup> GroupCells(const RunResult& run) {
  std::vector<AgreementGroup> groups;
  for (size_t i = 0; i < run.cells.size(); ++i) {
    const CellResult& c = run.cells[i];
    if (!Ran(c)) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const AgreementGroup& g) {
      return g.checkpoint == c.checkpoint && g.scenario == c.scenario && g.math == c.config.math;
    });
    if (it == groups.end()) {
      groups.push_back({c.checkpoint, c.scenario, c.config.math, {}, {}});
      it = groups.end() - 1;
    }
    it->cells.push_back(i);
    bool placed = false;
    for (std::vector<size_t>& cls : it->classes) {
      if (!FirstStepDifference(run.cells[cls.front()].steps, c.steps)) {
        cls.push_back(i);
        placed = true;
        break;
      }
    }
    if (!placed) it->classes.push_back({i});
  }
  for (AgreementGroup& g : groups) {
    size_t best = 0;
    for (size_t k = 0; k < g.classes.size(); ++k) {
      const bool has_reference =
          std::any_of(g.classes[k].begin(), g.classes[k].end(),
                      [&](size_t i) { return run.cells[i].config.kernels == "reference"; });
      if (has_reference) {
        best = k;
        break;
      }
      if (g.classes[k].size() > g.classes[best].size()) best = k;
    }
    std::rotate(g.classes.begin(), g.classes.begin() + static_cast<std::ptrdiff_t>(best),
                g.classes.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return groups;
}

std::vector<std::string> NeededReferenceKeys(const RunResult& run) {
  std::set<std::string> keys;
  for (const CellResult& c : run.cells)
    keys.insert(ReferenceGroupKey(c.config.math, run.machine.arch));
  return {keys.begin(), keys.end()};
}

std::string TraceKey(const std::string& checkpoint, const std::string& scenario,
                     const std::string& config_a, const std::string& config_b) {
  return checkpoint + '\t' + scenario + '\t' + config_a + '\t' + config_b;
}

std::string DescribeDivergence(const Divergence& d) {
  std::ostringstream out;
  out << d.checkpoint << " " << d.scenario << ": " << d.config_a << " and " << d.config_b
      << " first differ at step " << d.step_index << " (" << d.kind << ", position " << d.position
      << ")";
  if (!d.detail.empty()) out << ": " << d.detail;
  if (d.layer) {
    out << "; first diverging trace: layer " << *d.layer << ", op " << d.op;
  }
  return out.str();
}

void Judge(RunResult& run, const JudgeOptions& options) {
  for (CellResult& c : run.cells) {
    if (c.code == ResultCode::kFail) {
      c.code = ResultCode::kPass;
      c.message.clear();
    }
  }
  Diagnosis diag;
  std::vector<Diagnosis> found;  // one per finding, merged below

  Diagnosis identity;
  identity.kind = Diagnosis::Kind::kIdentityBroken;
  Diagnosis math_differs;
  math_differs.kind = Diagnosis::Kind::kMathLibraryDiffers;
  Diagnosis code_changed;
  code_changed.kind = Diagnosis::Kind::kCodeChanged;
  std::map<std::string, std::vector<std::string>> missing;  // key -> "checkpoint scenario"

  for (const AgreementGroup& g : GroupCells(run)) {
    const CellResult& base = run.cells[g.baseline()];
    for (size_t k = 1; k < g.classes.size(); ++k) {
      for (size_t i : g.classes[k]) {
        CellResult& c = run.cells[i];
        const StepDifference d = *FirstStepDifference(base.steps, c.steps);
        c.code = ResultCode::kFail;
        c.message = "differs from " + base.config.name + " at step " + std::to_string(d.index) +
                    " (" + d.kind + ", position " + std::to_string(d.position) + "): " + d.detail;
        Divergence div;
        div.checkpoint = g.checkpoint;
        div.scenario = g.scenario;
        div.config_a = base.config.name;
        div.config_b = c.config.name;
        div.step_index = d.index;
        div.kind = d.kind;
        div.position = d.position;
        div.detail = d.detail;
        auto traced = options.trace_differences.find(
            TraceKey(g.checkpoint, g.scenario, div.config_a, div.config_b));
        if (traced != options.trace_differences.end()) {
          div.layer = traced->second.layer;
          div.op = traced->second.op;
          c.message += "; first diverging trace: layer " + std::to_string(traced->second.layer) +
                       ", op " + traced->second.op + " at position " +
                       std::to_string(traced->second.position) + " (" + traced->second.detail + ")";
        }
        identity.divergences.push_back(div);
      }
    }
    const std::string key = ReferenceGroupKey(g.math, run.machine.arch);
    const std::string file = options.references_dir + "/" + ReferenceFileName(key);
    auto ref_it = options.references.find(key);
    if (ref_it == options.references.end() || !ref_it->second.Has(g.checkpoint, g.scenario)) {
      missing[key].push_back(g.checkpoint + " " + g.scenario);
      continue;
    }
    const ReferenceGroup& ref = ref_it->second;
    const std::vector<StepRecord> expected = ref.Steps(g.checkpoint, g.scenario);
    for (size_t i : g.cells) {
      CellResult& c = run.cells[i];
      if (c.code == ResultCode::kFail) continue;
      if (auto d = FirstStepDifference(AsReferenceSteps(c.steps), expected)) {
        c.code = ResultCode::kFail;
        c.message = "differs from " + file + " at step " + std::to_string(d->index) + " (" +
                    d->kind + ", position " + std::to_string(d->position) + "): " + d->detail;
      }
    }
    const auto d = FirstStepDifference(AsReferenceSteps(base.steps), expected);
    if (!d) continue;
    Divergence div;
    div.checkpoint = g.checkpoint;
    div.scenario = g.scenario;
    div.config_a = base.config.name;
    div.config_b = file;
    div.step_index = d->index;
    div.kind = d->kind;
    div.position = d->position;
    div.detail = d->detail;
    const bool same_library = base.math && SameLibrary(*base.math, ref.math);
    Diagnosis& target = same_library ? code_changed : math_differs;
    target.divergences.push_back(div);
    if (same_library) {
      if (code_changed.headline.empty()) {
        code_changed.headline = "All configurations agree with each other but not with " + file +
                                ", with the same math library (" + MathName(ref.math) +
                                "): the code changed the numbers.";
        const std::string good = ref.revision.empty()
                                     ? "<a revision that passed>"
                                     : ref.revision.substr(0, ref.revision.find("-dirty"));
        code_changed.details.push_back(
            "Find the commit that changed them (the references were generated at " +
            (ref.revision.empty() ? std::string("an unrecorded revision") : ref.revision) + "):");
        code_changed.details.push_back(
            "  " + BisectCommand(options) +
            (ref.revision.empty() ? " --good <a revision that passed>" : std::string()));
        code_changed.details.push_back(
            "If the change is intended, regenerate and commit the references: " + options.samebits +
            " reference generate" + (g.math == "portable" ? "" : " --math " + g.math));
      }
    } else if (math_differs.headline.empty()) {
      math_differs.headline = "All configurations agree with each other but not with " + file +
                              ": this environment's math library rounds differently.";
      math_differs.details.push_back(
          "This environment: " + (base.math ? MathName(*base.math) : std::string("unknown")) +
          "; the reference: " + MathName(ref.math) + ".");
      math_differs.details.push_back(
          "The portable profile (--math portable) does not depend on the math library. To keep "
          "this environment's results as the reference instead: " +
          options.samebits + " reference generate --math " + g.math);
    }
  }

  if (!identity.divergences.empty()) {
    identity.headline =
        "The identity is broken in this build: configurations disagree with each other (" +
        std::to_string(identity.divergences.size()) + " of them differ from their baseline).";
    if (!options.traced) {
      identity.details.push_back(
          "Rerun the gate with --trace to name the first diverging layer and op.");
    }
    identity.details.push_back("Find the commit that broke it: " + BisectCommand(options));
    found.push_back(identity);
  }
  if (!math_differs.divergences.empty()) found.push_back(math_differs);
  if (!code_changed.divergences.empty()) found.push_back(code_changed);
  if (!missing.empty()) {
    Diagnosis none;
    none.kind = Diagnosis::Kind::kNoReference;
    for (const auto& [key, pairs] : missing) {
      const std::string file = options.references_dir + "/" + ReferenceFileName(key);
      const bool whole = options.references.find(key) == options.references.end();
      if (none.headline.empty()) {
        none.headline =
            whole ? "No reference for this platform and math profile: " + file + " does not exist."
                  : file + " has no reference for " + pairs.front() +
                        (pairs.size() > 1 ? " and " + std::to_string(pairs.size() - 1) + " more"
                                          : "") +
                        ".";
      }
      const std::string profile = key.substr(0, key.find('-'));
      none.details.push_back(
          "Make one from a run where every configuration agrees, then review and commit it: " +
          options.samebits + " reference generate" +
          (profile == "portable" ? "" : " --math " + profile) + "  (writes " + file + ")");
    }
    found.push_back(none);
  }
  std::vector<const CellResult*> broken;
  for (const CellResult& c : run.cells) {
    if (c.code == ResultCode::kUnresolved || c.code == ResultCode::kTimeout ||
        c.code == ResultCode::kXPass) {
      broken.push_back(&c);
    }
  }
  if (!broken.empty()) {
    Diagnosis children;
    children.kind = Diagnosis::Kind::kChildFailures;
    children.headline = std::to_string(broken.size()) +
                        " children did not run to completion (crashed, hung, exited non-zero or "
                        "broke the protocol); they count as failures.";
    for (const CellResult* c : broken) {
      children.details.push_back(std::string(ResultCodeName(c->code)) + ": " + c->checkpoint + " " +
                                 c->scenario + " " + c->config.name + ": " + c->message);
    }
    found.push_back(children);
  }
  if (found.empty() && CountPassing(run) == 0) {
    diag.kind = Diagnosis::Kind::kAllAgree;
    diag.headline =
        "Nothing was checked: no cell ran (every selected cell is UNSUPPORTED on this machine; "
        "the summary says why).";
  } else if (found.empty()) {
    diag.kind = Diagnosis::Kind::kAllAgree;
    diag.headline = "Every configuration agrees with the others and with the references.";
  } else {
    std::stable_sort(found.begin(), found.end(), [](const Diagnosis& a, const Diagnosis& b) {
      return Rank(a.kind) < Rank(b.kind);
    });
    diag.kind = found.front().kind;
    diag.headline = found.front().headline;
    for (size_t f = 0; f < found.size(); ++f) {
      if (f > 0) diag.details.push_back("Also: " + found[f].headline);
      for (const Divergence& d : found[f].divergences)
        diag.details.push_back("  " + DescribeDivergence(d));
      for (const std::string& line : found[f].details) diag.details.push_back("  " + line);
      diag.divergences.insert(diag.divergences.end(), found[f].divergences.begin(),
                              found[f].divergences.end());
    }
  }
  run.diagnosis = std::move(diag);
}

int CountPassing(const RunResult& run) {
  return static_cast<int>(std::count_if(run.cells.begin(), run.cells.end(),
                                        [](const CellResult& c) { return c.code == ResultCode::kPass; }));
}

bool GatePasses(const RunResult& run) {
  if (run.diagnosis.kind != Diagnosis::Kind::kAllAgree) return false;
  for (const CellResult& c : run.cells) {
    if (IsFailure(c.code)) return false;
  }
  return CountPassing(run) > 0;
}

}  // namespace samebits::harness
