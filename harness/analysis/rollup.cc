// Roll-ups (rollup.h).
#include "harness/analysis/rollup.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "harness/analysis/judge.h"

namespace samebits::harness {
namespace {

// Returns "3 checkpoints, 8 scenarios" (singular when one).
std::string Spread(const std::set<std::string>& checkpoints,
                   const std::set<std::string>& scenarios) {
  auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  return count(checkpoints.size(), "checkpoint", "checkpoints") + ", " +
         count(scenarios.size(), "scenario", "scenarios");
}

// Where a divergence first differs, without the checkpoint and scenario:
// "step 0 (prefill, position 0), layer 0 op q", with a batched
// configuration's place ("step 5 (decode, position 17) — batch 8
// staggered, slot 3 of 6 sequences, row 9 of 14").
std::string Place(const Divergence& d) {
  std::string out = "step " + std::to_string(d.step_index) + " (" + d.kind + ", position " +
                    std::to_string(d.position) + ")";
  if (!d.batch_place.empty()) out += " — " + d.batch_place;
  if (d.layer) out += ", layer " + std::to_string(*d.layer) + " op " + d.op;
  return out;
}

std::vector<std::string> StderrLines(const std::string& tail, int keep) {
  std::vector<std::string> lines;
  std::istringstream in(tail);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  const size_t n = static_cast<size_t>(std::max(keep, 0));
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

}  // namespace

std::vector<std::string> RollUpDivergences(const std::vector<Divergence>& divergences) {
  // Pairs of configurations in first-seen order, each with its divergences.
  std::vector<std::vector<const Divergence*>> pairs;
  for (const Divergence& d : divergences) {
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) {
      return p.front()->config_a == d.config_a && p.front()->config_b == d.config_b;
    });
    if (it == pairs.end()) {
      pairs.push_back({&d});
    } else {
      it->push_back(&d);
    }
  }
  std::vector<std::string> lines;
  std::set<std::string> diverging;
  for (const Divergence& d : divergences) diverging.insert(d.config_b);
  if (divergences.size() > 1 && diverging.size() == 1) {
    lines.push_back("All " + std::to_string(divergences.size()) + " divergences are " +
                    *diverging.begin() + ":");
  }
  for (const auto& p : pairs) {
    const Divergence& first = *p.front();
    if (p.size() == 1) {
      lines.push_back(DescribeDivergence(first));
      continue;
    }
    std::set<std::string> checkpoints, scenarios, places;
    for (const Divergence* d : p) {
      checkpoints.insert(d->checkpoint);
      scenarios.insert(d->scenario);
      places.insert(Place(*d));
    }
    std::string line = first.config_b + " differs from " + first.config_a + " in " +
                       std::to_string(p.size()) + " checkpoint x scenario pairs (" +
                       Spread(checkpoints, scenarios) + "), ";
    if (places.size() == 1) {
      line += "all first at " + Place(first) + "; the first, " + first.checkpoint + " " +
              first.scenario;
    } else {
      line += "first at different places; the first, " + first.checkpoint + " " + first.scenario +
              ", at " + Place(first);
    }
    if (!first.detail.empty()) line += ": " + first.detail;
    lines.push_back(line);
  }
  return lines;
}

namespace {

// RollUpFailedCells over the failed cells `keep` accepts.
template <typename Keep>
std::vector<std::string> RollUpCells(const RunResult& run, int stderr_lines, Keep keep) {
  // (code, configuration) in first-seen order, each with its cells.
  std::vector<std::vector<const CellResult*>> groups;
  for (const CellResult& c : run.cells) {
    if (!IsFailure(c.code) || !keep(c)) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.front()->code == c.code && g.front()->config.name == c.config.name;
    });
    if (it == groups.end()) {
      groups.push_back({&c});
    } else {
      it->push_back(&c);
    }
  }
  std::vector<std::string> lines;
  for (const auto& g : groups) {
    const CellResult& first = *g.front();
    const std::string code = ResultCodeName(first.code);
    if (g.size() == 1) {
      lines.push_back(code + ": " + first.checkpoint + " " + first.scenario + " " +
                      first.config.name + ": " + first.message);
    } else {
      std::set<std::string> checkpoints, scenarios;
      for (const CellResult* c : g) {
        checkpoints.insert(c->checkpoint);
        scenarios.insert(c->scenario);
      }
      lines.push_back(code + ": " + std::to_string(g.size()) + " cells of " + first.config.name +
                      " (" + Spread(checkpoints, scenarios) + "); the first, " + first.checkpoint +
                      " " + first.scenario + ": " + first.message);
    }
    if (first.code == ResultCode::kFail) continue;
    for (const std::string& s : StderrLines(first.stderr_tail, stderr_lines))
      lines.push_back("    stderr: " + s);
  }
  return lines;
}

}  // namespace

std::vector<std::string> RollUpFailedCells(const RunResult& run, int stderr_lines) {
  return RollUpCells(run, stderr_lines, [](const CellResult&) { return true; });
}

std::vector<std::string> RollUpUnfinishedChildren(const RunResult& run) {
  return RollUpCells(run, 0, [](const CellResult& c) { return c.code != ResultCode::kFail; });
}

}  // namespace samebits::harness
