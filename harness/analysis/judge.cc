// The gate's analysis (judge.h).
#include "harness/analysis/judge.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "harness/analysis/batch.h"
#include "harness/analysis/compare.h"
#include "harness/analysis/rollup.h"
#include "harness/analysis/verdict.h"

namespace samebits::harness {
namespace {

std::string MathName(const MathLibraryInfo& m) {
  return m.name + " " + m.version + " (fingerprint " + m.fingerprint + ")";
}

bool SameLibrary(const MathLibraryInfo& a, const MathLibraryInfo& b) {
  return a.name == b.name && a.version == b.version && a.fingerprint == b.fingerprint;
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
    if (!RanAndCompared(c.code)) continue;
    const std::string& arch = CellArch(run, c);
    const bool portable = c.config.math == kPortableMath;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const AgreementGroup& g) {
      return g.checkpoint == c.checkpoint && g.scenario == c.scenario &&
             g.Profile() == ProfileOf(c.config) && g.engine == c.config.engine &&
             (portable || g.arch == arch);
    });
    if (it == groups.end()) {
      groups.push_back({c.checkpoint,
                        c.scenario,
                        c.config.math,
                        c.config.quant_dot,
                        c.config.engine,
                        arch,
                        {},
                        {}});
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
  // The baseline: the class of the reference kernels (or the profile's
  // baseline), else of the most unbatched configurations (a batched one is
  // judged against batch 1, not the other way round, however many batches
  // agree), else the largest.
  for (AgreementGroup& g : groups) {
    auto rank = [&](size_t k) {
      const std::vector<size_t>& cls = g.classes[k];
      const bool has_reference = std::any_of(cls.begin(), cls.end(), [&](size_t i) {
        return run.cells[i].config.kernels == "reference" || run.cells[i].config.baseline;
      });
      const auto unbatched = std::count_if(
          cls.begin(), cls.end(), [&](size_t i) { return !IsBatched(run.cells[i].config); });
      return std::make_tuple(has_reference, unbatched, cls.size());
    };
    size_t best = 0;
    for (size_t k = 1; k < g.classes.size(); ++k) {
      if (rank(k) > rank(best)) best = k;
    }
    std::rotate(g.classes.begin(), g.classes.begin() + static_cast<std::ptrdiff_t>(best),
                g.classes.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return groups;
}

std::vector<std::string> NeededReferenceKeys(const RunResult& run) {
  std::set<std::string> keys;
  for (const CellResult& c : run.cells)
    keys.insert(ReferenceGroupKey(ProfileOf(c.config), CellArch(run, c), c.config.engine));
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
  if (!d.batch_place.empty()) out << " — " << d.batch_place;
  if (!d.detail.empty()) out << ": " << d.detail;
  if (d.layer) {
    out << "; first diverging trace: layer " << *d.layer << ", op " << d.op;
  }
  return out.str();
}

namespace {

Divergence MakeDivergence(const AgreementGroup& g, const std::string& config_a,
                          const std::string& config_b, const StepDifference& d,
                          std::string batch_place) {
  Divergence div;
  div.checkpoint = g.checkpoint;
  div.scenario = g.scenario;
  div.config_a = config_a;
  div.config_b = config_b;
  div.batch_place = std::move(batch_place);
  div.step_index = d.index;
  div.kind = d.kind;
  div.position = d.position;
  div.detail = d.detail;
  return div;
}

std::string DifferenceText(const std::string& from, const StepDifference& d,
                           const std::string& batch_place) {
  return "differs from " + from + " at step " + std::to_string(d.index) + " (" + d.kind +
         ", position " + std::to_string(d.position) + ")" +
         (batch_place.empty() ? "" : " — " + batch_place) + ": " + d.detail;
}

Diagnosis OfKind(Diagnosis::Kind kind) {
  Diagnosis d;
  d.kind = kind;
  return d;
}

// Forgets an earlier judgement: FAIL cells ran to completion and are
// compared afresh.
void ResetJudgement(RunResult& run) {
  for (CellResult& c : run.cells) {
    if (c.code == ResultCode::kFail || c.code == ResultCode::kKnown ||
        c.code == ResultCode::kFixed) {
      c.code = ResultCode::kPass;
      c.message.clear();
    }
  }
}

// Within each group: every cell outside the baseline class becomes FAIL,
// with one divergence each (and the trace's first diverging layer and op
// when the gate traced the pair).
struct GroupFindings {
  Diagnosis identity = OfKind(Diagnosis::Kind::kIdentityBroken);
  // Batched cells that differ in groups where every unbatched one agrees.
  Diagnosis batch = OfKind(Diagnosis::Kind::kBatchVariance);
};

// Marks FIXED each cell of `g`'s baseline class that its engine's profile
// declares to differ: the declaration no longer holds.
void MarkFixed(RunResult& run, const AgreementGroup& g) {
  const std::string& base = run.cells[g.baseline()].config.name;
  for (size_t i : g.classes.front()) {
    CellResult& c = run.cells[i];
    if (c.config.known_difference.empty()) continue;
    c.code = ResultCode::kFixed;
    c.message = "identical to " + base + ", yet the engine's profile declares it to differ (" +
                c.config.known_difference + "): remove that known difference from the profile";
  }
}

// Returns whether every unbatched cell of `g` is in its baseline class.
bool UnbatchedAgree(const RunResult& run, const AgreementGroup& g) {
  for (size_t k = 1; k < g.classes.size(); ++k) {
    for (size_t i : g.classes[k]) {
      if (!IsBatched(run.cells[i].config)) return false;
    }
  }
  return std::any_of(g.classes.front().begin(), g.classes.front().end(),
                     [&](size_t i) { return !IsBatched(run.cells[i].config); });
}

GroupFindings CompareWithinGroups(RunResult& run, const std::vector<AgreementGroup>& groups,
                                  const JudgeOptions& options) {
  GroupFindings out;
  for (const AgreementGroup& g : groups) {
    const CellResult& base = run.cells[g.baseline()];
    Diagnosis& target = UnbatchedAgree(run, g) ? out.batch : out.identity;
    MarkFixed(run, g);
    for (size_t k = 1; k < g.classes.size(); ++k) {
      for (size_t i : g.classes[k]) {
        CellResult& c = run.cells[i];
        const StepDifference d = *FirstStepDifference(base.steps, c.steps);
        const std::string place = DivergenceBatchPlace(base, c, d.index);
        if (!c.config.known_difference.empty()) {
          c.code = ResultCode::kKnown;
          c.message = DifferenceText(base.config.name, d, place) +
                      " (declared: " + c.config.known_difference + ")";
          continue;
        }
        c.code = ResultCode::kFail;
        c.message = DifferenceText(base.config.name, d, place);
        Divergence div = MakeDivergence(g, base.config.name, c.config.name, d, place);
        auto traced = options.trace_differences.find(
            TraceKey(g.checkpoint, g.scenario, div.config_a, div.config_b));
        if (traced != options.trace_differences.end()) {
          const TraceDifference& t = traced->second;
          div.layer = t.layer;
          div.op = t.op;
          c.message += "; first diverging trace: layer " + std::to_string(t.layer) + ", op " +
                       t.op + " at position " + std::to_string(t.position) + " (" + t.detail + ")";
        }
        target.divergences.push_back(div);
      }
    }
  }
  auto advise = [&](Diagnosis& d) {
    if (!options.traced) {
      d.details.push_back("Rerun the gate with --trace to name the first diverging layer and op.");
    }
    d.details.push_back("Find the commit that broke it: " + BisectCommand(options));
  };
  if (!out.identity.divergences.empty()) {
    out.identity.headline =
        "The identity is broken in this build: configurations disagree with each other (" +
        std::to_string(out.identity.divergences.size()) + " of them differ from their baseline).";
    advise(out.identity);
  }
  if (!out.batch.divergences.empty()) {
    out.batch.headline =
        "The cpu pass is not batch-invariant: rows of other sequences change this sequence's "
        "numbers (every unbatched configuration agrees; " +
        std::to_string(out.batch.divergences.size()) + " batched ones differ from batch 1).";
    advise(out.batch);
  }
  return out;
}

// Says, once, that the code changed the numbers, with the `samebits bisect`
// command that finds the commit.
void DescribeCodeChanged(Diagnosis& d, const AgreementGroup& g, const CellResult& base,
                         const ReferenceGroup& ref, const std::string& file,
                         const JudgeOptions& options) {
  if (!d.headline.empty()) return;
  const bool same_library = base.math && SameLibrary(*base.math, ref.math);
  d.headline = "All configurations agree with each other but not with " + file +
               (same_library ? ", with the same math library (" + MathName(ref.math) + ")"
                             : ", and the portable math's fingerprint changed (" +
                                   (base.math ? MathName(*base.math) : std::string("unknown")) +
                                   ", the reference: " + MathName(ref.math) + ")") +
               ": the code changed the numbers.";
  d.details.push_back(
      "Find the commit that changed them (the references were generated at " +
      (ref.revision.empty() ? std::string("an unrecorded revision") : ref.revision) + "):");
  d.details.push_back("  " + BisectCommand(options) +
                      (ref.revision.empty() ? " --good <a revision that passed>" : std::string()));
  d.details.push_back("If the change is intended, regenerate and commit the references: " +
                      options.samebits + " reference generate" + ProfileFlags(g.Profile()));
}

// Says, once, that this environment's math library rounds differently,
// naming both libraries.
void DescribeMathDiffers(Diagnosis& d, const AgreementGroup& g, const CellResult& base,
                         const ReferenceGroup& ref, const std::string& file,
                         const JudgeOptions& options) {
  if (!d.headline.empty()) return;
  d.headline = "All configurations agree with each other but not with " + file +
               ": this environment's math library rounds differently.";
  d.details.push_back(
      "This environment: " + (base.math ? MathName(*base.math) : std::string("unknown")) +
      "; the reference: " + MathName(ref.math) + ".");
  d.details.push_back(
      "The portable profile (--math portable) does not depend on the math library. To keep "
      "this environment's results as the reference instead: " +
      options.samebits + " reference generate" + ProfileFlags(g.Profile()));
}

struct ReferenceFindings {
  Diagnosis math_differs = OfKind(Diagnosis::Kind::kMathLibraryDiffers);
  Diagnosis code_changed = OfKind(Diagnosis::Kind::kCodeChanged);
  std::map<std::string, std::vector<std::string>> missing;  // key -> "checkpoint scenario"
};

// Against the references: cells that still agree within their group but
// not with the reference become FAIL; the group's baseline says whether the
// math library or the code is to blame (the portable profile: always the
// code; the libm profile: the library when its fingerprint differs). Groups without a reference are
// collected in `missing`.
ReferenceFindings CompareWithReferences(RunResult& run, const std::vector<AgreementGroup>& groups,
                                        const JudgeOptions& options) {
  ReferenceFindings out;
  for (const AgreementGroup& g : groups) {
    const std::string key = ReferenceGroupKey(g.Profile(), g.arch, g.engine);
    const std::string file = options.references_dir + "/" + ReferenceFileName(key);
    auto ref_it = options.references.find(key);
    if (ref_it == options.references.end() || !ref_it->second.Has(g.checkpoint, g.scenario)) {
      out.missing[key].push_back(g.checkpoint + " " + g.scenario);
      continue;
    }
    const ReferenceGroup& ref = ref_it->second;
    const std::vector<StepRecord> expected = ref.Steps(g.checkpoint, g.scenario);
    for (size_t i : g.cells) {
      CellResult& c = run.cells[i];
      // A KNOWN cell differs from the baseline, and so from its reference, by declaration.
      if (c.code == ResultCode::kFail || c.code == ResultCode::kKnown) continue;
      if (auto d = FirstStepDifference(AsReferenceSteps(c.steps), expected)) {
        c.code = ResultCode::kFail;
        c.message = DifferenceText(file, *d, StepBatchPlace(c, d->index));
      }
    }
    const CellResult& base = run.cells[g.baseline()];
    const auto d = FirstStepDifference(AsReferenceSteps(base.steps), expected);
    if (!d) continue;
    // The portable profile's math is the project's own code: its fingerprint
    // changing means the code changed, whatever the system libm is.
    const bool code_changed =
        g.math == kPortableMath || (base.math && SameLibrary(*base.math, ref.math));
    Diagnosis& target = code_changed ? out.code_changed : out.math_differs;
    target.divergences.push_back(
        MakeDivergence(g, base.config.name, file, *d, StepBatchPlace(base, d->index)));
    if (code_changed) {
      DescribeCodeChanged(target, g, base, ref, file, options);
    } else {
      DescribeMathDiffers(target, g, base, ref, file, options);
    }
  }
  return out;
}

// Groups with no reference: which file is missing, and how to make it.
Diagnosis MissingReferences(const std::map<std::string, std::vector<std::string>>& missing,
                            const JudgeOptions& options) {
  Diagnosis none = OfKind(Diagnosis::Kind::kNoReference);
  for (const auto& [key, pairs] : missing) {
    const std::string file = options.references_dir + "/" + ReferenceFileName(key);
    const bool whole = options.references.find(key) == options.references.end();
    if (none.headline.empty()) {
      none.headline =
          whole
              ? "No reference for this platform and math profile: " + file + " does not exist."
              : file + " has no reference for " + pairs.front() +
                    (pairs.size() > 1 ? " and " + std::to_string(pairs.size() - 1) + " more" : "") +
                    ".";
    }
    // "ENGINE/portable" for an engine described by a profile (ReferenceGroupKey).
    const ReferenceGroupKeyParts parts = ParseReferenceGroupKey(key);
    std::string advice =
        "Make one from a run where every configuration agrees, then review and commit it: " +
        options.samebits + " reference generate";
    if (!parts.engine.empty())
      advice += " --engine " + parts.engine + " (or --engine-profile FILE)";
    advice += ProfileFlags(parts.profile);
    advice += "  (writes " + file + ")";
    none.details.push_back(std::move(advice));
  }
  return none;
}

// Children that did not run to completion: each counts as a failure.
Diagnosis ChildFailures(const RunResult& run) {
  Diagnosis children = OfKind(Diagnosis::Kind::kChildFailures);
  int broken = 0;
  for (const CellResult& c : run.cells) {
    if (c.code != ResultCode::kUnresolved && c.code != ResultCode::kTimeout) continue;
    ++broken;
  }
  children.details = RollUpUnfinishedChildren(run);  // one line per code x configuration
  if (broken > 0) {
    children.headline = std::to_string(broken) +
                        " children did not run to completion (crashed, hung, exited non-zero or "
                        "broke the protocol); they count as failures.";
  }
  return children;
}

// Fails every finished cell for which `defect` says something, whatever
// its steps matched, and returns the diagnosis: `headline(count)` over one
// detail line per cell.
template <typename Defect, typename Headline>
Diagnosis FailCellsWithDefects(RunResult& run, Defect defect, Headline headline) {
  Diagnosis d = OfKind(Diagnosis::Kind::kIdentityBroken);
  int count = 0;
  for (CellResult& c : run.cells) {
    const std::string why = defect(c);
    const bool finished =
        RanAndCompared(c.code) || c.code == ResultCode::kKnown || c.code == ResultCode::kFixed;
    if (why.empty() || !finished) continue;
    ++count;
    c.code = ResultCode::kFail;
    c.message = why + (c.message.empty() ? "" : "; " + c.message);
    d.details.push_back(c.checkpoint + " / " + c.scenario + " / " + c.config.name + ": " + why);
  }
  if (count > 0) d.headline = headline(count);
  return d;
}

// Cells whose engine ran them several times in one process and got more
// than one output: the same request gave different bits.
Diagnosis RepeatVariance(RunResult& run) {
  return FailCellsWithDefects(run, RepeatVarianceText, [](int count) {
    return std::to_string(count) +
           " cells gave different outputs when their engine ran them again in the same process "
           "(repeats): the same request is not deterministic.";
  });
}

// Cells whose engine sampled at a temperature above 0 and found a seed
// that did not reproduce its sample, or seeds that all drew one sample.
Diagnosis SamplingDefects(RunResult& run) {
  return FailCellsWithDefects(run, SamplingDefectText, [](int count) {
    return std::to_string(count) +
           " cells sampled at a temperature above 0 and found a seed that does not reproduce "
           "its sample or seeds that do not change it.";
  });
}

// Returns how many cells differ as their engine's profile declares.
int CountKnown(const RunResult& run) {
  return static_cast<int>(
      std::count_if(run.cells.begin(), run.cells.end(),
                    [](const CellResult& c) { return c.code == ResultCode::kKnown; }));
}

// Returns one diagnosis from the findings (those with a headline): the most
// severe leads, the others follow as "Also: ...", every divergence kept.
Diagnosis Merge(std::vector<Diagnosis> found, const RunResult& run) {
  std::erase_if(found, [](const Diagnosis& d) { return d.headline.empty(); });
  Diagnosis diag;
  if (found.empty()) {
    diag.kind = Diagnosis::Kind::kAllAgree;
    diag.headline =
        CountPassing(run) == 0
            ? "Nothing was checked: no cell ran (every selected cell is UNSUPPORTED on this "
              "machine; the summary says why)."
            : "Every configuration agrees with the others and with the references.";
    if (const int known = CountKnown(run); known > 0) {
      diag.details.push_back(std::to_string(known) +
                             " KNOWN: cells that differ from their baseline as the engine's "
                             "profile declares (each says why).");
    }
    return diag;
  }
  std::stable_sort(found.begin(), found.end(), [](const Diagnosis& a, const Diagnosis& b) {
    return KindInfo(a.kind).severity < KindInfo(b.kind).severity;
  });
  diag.kind = found.front().kind;
  diag.headline = found.front().headline;
  for (size_t f = 0; f < found.size(); ++f) {
    if (f > 0) diag.details.push_back("Also: " + found[f].headline);
    for (const std::string& line : RollUpDivergences(found[f].divergences))
      diag.details.push_back("  " + line);
    for (const std::string& line : found[f].details) diag.details.push_back("  " + line);
    diag.divergences.insert(diag.divergences.end(), found[f].divergences.begin(),
                            found[f].divergences.end());
  }
  return diag;
}

}  // namespace

JudgeOptions LoadJudgeOptions(const RunResult& run, const std::string& dir) {
  JudgeOptions options;
  for (const std::string& key : NeededReferenceKeys(run)) {
    if (auto group = LoadReferenceGroup(dir, key)) options.references[key] = std::move(*group);
  }
  return options;
}

void Judge(RunResult& run, const JudgeOptions& options) {
  ResetJudgement(run);
  const std::vector<AgreementGroup> groups = GroupCells(run);
  GroupFindings within = CompareWithinGroups(run, groups, options);
  ReferenceFindings references = CompareWithReferences(run, groups, options);
  std::vector<Diagnosis> found;
  found.push_back(std::move(within.identity));
  found.push_back(std::move(within.batch));
  found.push_back(RepeatVariance(run));
  found.push_back(SamplingDefects(run));
  found.push_back(std::move(references.math_differs));
  found.push_back(std::move(references.code_changed));
  found.push_back(MissingReferences(references.missing, options));
  found.push_back(ChildFailures(run));
  found.push_back(CheckEquivalences(run, options.equivalences));
  run.diagnosis = Merge(std::move(found), run);
}

}  // namespace samebits::harness
