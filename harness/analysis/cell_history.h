// One cell's outputs over the stored runs: "since when has this cell given
// what it gives now?", answered from the store before anyone bisects
// (`samebits history --cell CHECKPOINT/SCENARIO/CONFIG`).
//
// Each stored run that holds the cell is a sighting. Sightings whose steps
// are identical (token and both hashes of every step, compared as bits) gave
// one output; outputs are lettered A, B, ... in the order they first
// appear. Where a sighting's output differs from the one before it, the
// history says at which step it first differs and what the stored records
// say changed between the two runs (the engine's build, the math library,
// the checkpoint's weights, the scenario file, the machine, the device);
// when none of those changed, the same build gave two outputs on one
// machine, which is a determinism failure rather than a regression.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness {

// One stored run's result for the cell.
struct CellSighting {
  int64_t run_id = 0;
  std::string started_at;    // the run's start, ISO 8601 UTC
  std::string machine_name;  // the run's machine name (machine_name.h)
  CellResult cell;           // with its steps
};

// A cell named as `history --cell` takes it: CHECKPOINT/SCENARIO/CONFIG.
// The checkpoint may itself hold '/' (a file's path); scenario and
// configuration names never do, so the last two '/' split it.
struct CellKey {
  std::string checkpoint, scenario, config;
};

// Parses CHECKPOINT/SCENARIO/CONFIG. Throws std::invalid_argument naming
// what is missing.
CellKey ParseCellKey(const std::string& text);

// One sighting in the history, oldest first.
struct HistoryEntry {
  CellSighting sighting;
  int output = 0;  // 0 for A, 1 for B, ...
  // Set where the output differs from the previous sighting's:
  // the first step that differs (or the shorter length where one output is
  // a prefix of the other), and what the records say changed.
  std::optional<int> first_differing_step;
  std::vector<std::string> changed;  // "build 5e0558a -> 9f91cb9", "machine a -> b", ...
};

struct CellHistory {
  CellKey key;
  std::vector<HistoryEntry> entries;  // oldest first
  int outputs = 0;                    // how many distinct outputs
  // The index of the newest entry whose output differs from the entry
  // before it: where the current output began. Unset when every sighting
  // gave one output (or there is at most one).
  std::optional<size_t> last_change;
};

// Traces the history of `key` over `newest_first` (what Store::CellHistory
// returns).
CellHistory TraceCellHistory(const CellKey& key, std::vector<CellSighting> newest_first);

// The letter of output `index`: A..Z, then A27, A28, ...
std::string OutputLetter(int index);

// Returns the history as text for a person: one line per sighting, then
// "since when" and, where the change came with a new build of clean,
// known revisions, the `samebits bisect` command that finds the commit.
// `program` is how to name samebits in that command.
std::string FormatCellHistory(const CellHistory& history, const std::string& program);

}  // namespace samebits::harness
