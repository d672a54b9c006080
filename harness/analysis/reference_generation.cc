// Making references from a run (reference_generation.h).
#include "harness/analysis/reference_generation.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>

#include "harness/analysis/compare.h"
#include "harness/analysis/judge.h"

namespace samebits::harness {

std::string WhyNotAReference(const RunResult& run) {
  std::ostringstream why;
  for (const CellResult& c : run.cells) {
    if (c.code == ResultCode::kUnresolved || c.code == ResultCode::kTimeout) {
      why << "  " << ResultCodeName(c.code) << ": " << c.checkpoint << " " << c.scenario << " "
          << c.config.name << ": " << c.message << "\n";
    }
  }
  for (const AgreementGroup& g : GroupCells(run)) {
    const CellResult& base = run.cells[g.baseline()];
    for (size_t k = 1; k < g.classes.size(); ++k) {
      // Cells the engine's profile declares to differ are not the reference.
      const auto declared = [&](size_t i) { return !run.cells[i].config.known_difference.empty(); };
      if (std::all_of(g.classes[k].begin(), g.classes[k].end(), declared)) continue;
      const CellResult& other = run.cells[g.classes[k].front()];
      const auto d = FirstStepDifference(base.steps, other.steps);
      why << "  " << g.checkpoint << " " << g.scenario << ": " << other.config.name
          << " differs from " << base.config.name << " at step " << d->index << " (" << d->kind
          << ", position " << d->position << "): " << d->detail << "\n";
    }
    for (size_t i : g.cells) {
      const CellResult& c = run.cells[i];
      if (!c.math && !base.math && !g.engine.empty()) continue;  // another engine, silent on it
      if (!c.math || !base.math || c.math->fingerprint != base.math->fingerprint ||
          c.math->name != base.math->name || c.math->version != base.math->version) {
        why << "  " << g.checkpoint << " " << g.scenario << ": " << c.config.name
            << " reports another math library than " << base.config.name << "\n";
      }
    }
  }
  return why.str();
}

std::map<std::string, ReferenceGroup> ReferenceGroupsFromRun(const RunResult& run) {
  std::map<std::string, ReferenceGroup> groups;
  for (const AgreementGroup& g : GroupCells(run)) {
    const CellResult& base = run.cells[g.baseline()];
    // Another engine need not describe its math library; its references
    // then name the engine instead.
    if (!base.math && g.engine.empty()) {
      throw ReferenceError("the run's " + ProfileName(g.Profile()) + " cells name no math library");
    }
    const MathLibraryInfo math =
        base.math ? *base.math : MathLibraryInfo{g.math, g.engine, "unknown", "none"};
    const std::string key = ReferenceGroupKey(g.Profile(), g.arch, g.engine);
    ReferenceGroup& group = groups[key];
    if (group.key.empty()) {
      group.key = key;
      group.math = math;
      group.quant_dot = g.quant_dot;
      if (base.build) group.revision = base.build->revision + (base.build->dirty ? "-dirty" : "");
    } else if (group.math.fingerprint != math.fingerprint) {
      throw ReferenceError("the run's " + ProfileName(g.Profile()) +
                           " cells report different math libraries");
    }
    for (const StepRecord& s : base.steps) {
      group.lines.push_back(
          {g.checkpoint, g.scenario, s.index, s.kind, s.position, s.token, s.fnv1a64, s.xxh3_64});
    }
  }
  return groups;
}

bool SameMathLibrary(const ReferenceGroup& group, const ReferenceGroup& old) {
  return old.math.name == group.math.name && old.math.version == group.math.version &&
         old.math.fingerprint == group.math.fingerprint;
}

void KeepUncoveredPairs(ReferenceGroup& group, const ReferenceGroup& old) {
  std::set<std::pair<std::string, std::string>> covered;
  for (const ReferenceLine& l : group.lines) covered.insert({l.checkpoint, l.scenario});
  for (const ReferenceLine& l : old.lines) {
    if (covered.count({l.checkpoint, l.scenario}) == 0) group.lines.push_back(l);
  }
}

bool OnlyRevisionDiffers(const ReferenceGroup& group, const ReferenceGroup& old) {
  ReferenceGroup unchanged = group;
  unchanged.revision = old.revision;
  return FormatReferenceGroup(unchanged) == FormatReferenceGroup(old);
}

}  // namespace samebits::harness
