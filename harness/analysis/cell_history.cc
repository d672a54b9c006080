// One cell's outputs over the stored runs (cell_history.h).
#include "harness/analysis/cell_history.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "engine/protocol/records.h"

namespace samebits::harness {
namespace {

// Whether two steps gave the same output, bit for bit: the token chosen and
// both hashes of the logits row, at the same place.
bool SameStep(const StepRecord& a, const StepRecord& b) {
  return a.kind == b.kind && a.position == b.position && a.token == b.token &&
         a.fnv1a64 == b.fnv1a64 && a.xxh3_64 == b.xxh3_64;
}

// Whether two sightings gave the same output. A cell that gave no step (it
// crashed, hung or was unsupported) is its result code instead.
bool SameOutput(const CellResult& a, const CellResult& b) {
  if (a.steps.empty() || b.steps.empty()) {
    return a.steps.empty() && b.steps.empty() && a.code == b.code;
  }
  return a.steps.size() == b.steps.size() &&
         std::equal(a.steps.begin(), a.steps.end(), b.steps.begin(), SameStep);
}

// The first step at which two different outputs differ: the first unequal
// step, or the shorter one's length.
int FirstDifferingStep(const CellResult& a, const CellResult& b) {
  const size_t n = std::min(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < n; ++i) {
    if (!SameStep(a.steps[i], b.steps[i])) return static_cast<int>(i);
  }
  return static_cast<int>(n);
}

std::string ShortRevision(const BuildInfo& build) {
  return build.revision.substr(0, 12) + (build.dirty ? "-dirty" : "");
}

std::string BuildText(const CellResult& cell) {
  if (!cell.build || cell.build->revision.empty()) return "?";
  return ShortRevision(*cell.build);
}

std::string MathLibraryText(const MathLibraryInfo& math) {
  return math.name + " " + math.version + " (" + math.fingerprint + ")";
}

std::string DeviceText(const CellResult& cell) {
  return cell.device ? cell.device->name : std::string("CPU");
}

// Adds "WHAT a -> b" to `changed` when both sides are known and differ.
void NoteChange(std::vector<std::string>& changed, const std::string& what,
                const std::string& before, const std::string& after) {
  if (!before.empty() && !after.empty() && before != after) {
    changed.push_back(what + " " + before + " -> " + after);
  }
}

// What the stored records say changed between two sightings of the cell.
std::vector<std::string> WhatChanged(const CellSighting& before, const CellSighting& after) {
  const CellResult& a = before.cell;
  const CellResult& b = after.cell;
  std::vector<std::string> changed;
  NoteChange(changed, "engine", a.config.engine.empty() ? "samebits-engine" : a.config.engine,
             b.config.engine.empty() ? "samebits-engine" : b.config.engine);
  if (a.build && b.build) {
    NoteChange(changed, "build", ShortRevision(*a.build), ShortRevision(*b.build));
    if (a.build->revision == b.build->revision && a.build->dirty == b.build->dirty) {
      NoteChange(changed, "compiler", a.build->compiler, b.build->compiler);
      if (a.build->flags != b.build->flags) changed.emplace_back("build flags");
    }
  }
  if (a.math && b.math) {
    NoteChange(changed, "math library", MathLibraryText(*a.math), MathLibraryText(*b.math));
  }
  NoteChange(changed, "checkpoint weights", a.weights_xxh3, b.weights_xxh3);
  NoteChange(changed, "scenario file", a.scenario_xxh3, b.scenario_xxh3);
  NoteChange(changed, "machine", before.machine_name, after.machine_name);
  NoteChange(changed, "ISA", a.isa_used, b.isa_used);
  NoteChange(changed, "device", DeviceText(a), DeviceText(b));
  return changed;
}

// "12 steps, last xxh3_64 0f3c2a1b4d5e6f70", or what gave no output.
std::string OutputText(const CellResult& cell) {
  if (cell.steps.empty()) {
    return std::string("no output (") + ResultCodeName(cell.code) +
           (cell.message.empty() ? "" : ": " + cell.message) + ")";
  }
  return std::to_string(cell.steps.size()) + " steps, last xxh3_64 " +
         protocol::HashToHex(cell.steps.back().xxh3_64);
}

std::string JoinChanges(const std::vector<std::string>& changed) {
  if (changed.empty()) return "nothing recorded changed";
  std::string out;
  for (const std::string& c : changed) out += (out.empty() ? "" : ", ") + c;
  return out;
}

bool BuildChanged(const HistoryEntry& entry) {
  return std::any_of(entry.changed.begin(), entry.changed.end(),
                     [](const std::string& c) { return c.rfind("build ", 0) == 0; });
}

// The bisect that finds the commit behind the newest change, when the two
// runs' builds are clean revisions of a repository; else why there is none.
std::string BisectAdvice(const CellHistory& history, const HistoryEntry& before,
                         const HistoryEntry& after, const std::string& program) {
  const CellResult& good = before.sighting.cell;
  const CellResult& bad = after.sighting.cell;
  if (after.changed.empty()) {
    return "the same build, machine and inputs gave two outputs: the engine is not deterministic "
           "here, and there is no commit to bisect (samebits card shows which axis moves it)\n";
  }
  if (!BuildChanged(after)) {
    return "the build did not change: no commit to bisect; the change came with the " +
           JoinChanges(after.changed) + "\n";
  }
  if (good.build->dirty || bad.build->dirty) {
    return "a build from a tree with uncommitted changes: bisect needs two commits\n";
  }
  const std::string checkpoint =
      bad.engine_checkpoint.empty() ? history.key.checkpoint : bad.engine_checkpoint;
  return "to find the commit:\n  " + program + " bisect --good " + good.build->revision +
         " --bad " + bad.build->revision + " --checkpoint " + checkpoint + " --scenario " +
         history.key.scenario + " --config " + history.key.config + "\n";
}

}  // namespace

CellKey ParseCellKey(const std::string& text) {
  const size_t last = text.rfind('/');
  const size_t middle =
      last == std::string::npos || last == 0 ? std::string::npos : text.rfind('/', last - 1);
  if (middle == std::string::npos) {
    throw std::invalid_argument("'" + text +
                                "' is not CHECKPOINT/SCENARIO/CONFIG (for example "
                                "synthetic:tiny/classic/cpu-t2)");
  }
  CellKey key{text.substr(0, middle), text.substr(middle + 1, last - middle - 1),
              text.substr(last + 1)};
  if (key.checkpoint.empty() || key.scenario.empty() || key.config.empty()) {
    throw std::invalid_argument("'" + text +
                                "': the checkpoint, the scenario and the configuration must "
                                "each be named (CHECKPOINT/SCENARIO/CONFIG)");
  }
  return key;
}

std::string OutputLetter(int index) {
  if (index < 26) return std::string(1, static_cast<char>('A' + index));
  return "A" + std::to_string(index + 1);
}

CellHistory TraceCellHistory(const CellKey& key, std::vector<CellSighting> newest_first) {
  CellHistory history;
  history.key = key;
  // Each distinct output's first entry, by index: `entries` grows, so
  // pointers into it would not last.
  std::vector<size_t> outputs;
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) {
    HistoryEntry entry;
    entry.sighting = std::move(*it);
    const CellResult& cell = entry.sighting.cell;
    size_t found = 0;
    while (found < outputs.size() &&
           !SameOutput(history.entries[outputs[found]].sighting.cell, cell)) {
      ++found;
    }
    entry.output = static_cast<int>(found);
    if (found == outputs.size()) outputs.push_back(history.entries.size());
    if (!history.entries.empty()) {
      const HistoryEntry& previous = history.entries.back();
      if (previous.output != entry.output) {
        entry.first_differing_step = FirstDifferingStep(previous.sighting.cell, cell);
        entry.changed = WhatChanged(previous.sighting, entry.sighting);
        history.last_change = history.entries.size();
      }
    }
    history.entries.push_back(std::move(entry));
  }
  history.outputs = static_cast<int>(outputs.size());
  return history;
}

std::string FormatCellHistory(const CellHistory& history, const std::string& program) {
  const CellKey& key = history.key;
  const std::string name = key.checkpoint + "/" + key.scenario + "/" + key.config;
  if (history.entries.empty()) {
    return "no stored run holds the cell " + name +
           " (`samebits show RUN` lists a run's cells; the names are CHECKPOINT/SCENARIO/CONFIG "
           "as it prints them)\n";
  }
  std::string out = "history of " + name + ": " + std::to_string(history.entries.size()) +
                    " stored run" + (history.entries.size() == 1 ? "" : "s") + ", oldest first; " +
                    std::to_string(history.outputs) + " distinct output" +
                    (history.outputs == 1 ? "" : "s") + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%6s  %-20s  %-16s  %-18s  %-8s  %s\n", "RUN", "STARTED",
                "MACHINE", "BUILD", "CODE", "OUTPUT");
  out += line;
  int shown = -1;  // the highest output letter described so far
  for (const HistoryEntry& e : history.entries) {
    const CellSighting& s = e.sighting;
    const std::string what = OutputLetter(e.output);
    std::string detail;
    if (e.output > shown) {
      detail = OutputText(s.cell);
      shown = e.output;
    }
    if (e.first_differing_step) {
      detail += std::string(detail.empty() ? "" : "; ") + "first differs at step " +
                std::to_string(*e.first_differing_step) + "; changed: " + JoinChanges(e.changed);
    }
    std::snprintf(line, sizeof line, "%6lld  %-20s  %-16s  %-18s  %-8s  ",
                  static_cast<long long>(s.run_id), s.started_at.c_str(), s.machine_name.c_str(),
                  BuildText(s.cell).c_str(), ResultCodeName(s.cell.code));
    out += line + what + (detail.empty() ? "" : "  " + detail) + "\n";
  }
  if (!history.last_change) {
    const CellSighting& first = history.entries.front().sighting;
    out += "since when: every stored run of the cell gave output A, since run " +
           std::to_string(first.run_id) + " (" + first.started_at + ")\n";
    return out;
  }
  const HistoryEntry& after = history.entries[*history.last_change];
  const HistoryEntry& before = history.entries[*history.last_change - 1];
  out += "since when: output " + OutputLetter(after.output) + " since run " +
         std::to_string(after.sighting.run_id) + " (" + after.sighting.started_at + ", build " +
         BuildText(after.sighting.cell) + "); run " + std::to_string(before.sighting.run_id) +
         " before it (build " + BuildText(before.sighting.cell) + ") gave output " +
         OutputLetter(before.output) + "\n";
  out += BisectAdvice(history, before, after, program);
  return out;
}

}  // namespace samebits::harness
