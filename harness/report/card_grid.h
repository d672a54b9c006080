// The grid a determinism card opens with (issue 42, "At a glance"): one row
// per varied value (axis = value, its configuration), one column per
// checkpoint and scenario, one mark per pair, so a reviewer reads a card of
// many files on one screen before the details below it.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/card.h"

namespace samebits::harness::report {

struct CardGrid {
  // A column per checkpoint: its short name (a file's name without its
  // folder and extension), and the scenario where the card has several (a
  // feed table's rows then go to a column "NAME / feed" of their own;
  // otherwise they join their checkpoint's).
  std::vector<std::string> columns;
  struct Row {
    std::string axis, value, config;
    std::vector<const CardRow*> cells;  // per column; nullptr: not in that table
  };
  std::vector<Row> rows;  // in the order the rows first appear
};

// Returns the grid of `card`; its rows point into `card`.
CardGrid BuildCardGrid(const Card& card);

// Returns a row's mark: "=" identical, "K3" KNOWN from step 3, "D3"
// DIFFERS from step 3, "F" FIXED, "-" UNSUPPORTED, "B" BROKEN; "" for no row.
std::string GridMark(const CardRow* row);

// Returns a grid row's label: "threads = 2 (cpu-t2)", or "negative control
// (cpu-libm)" for the card's control.
std::string GridRowLabel(const CardGrid::Row& row);

// The legend of the marks, one line.
std::string GridLegend(bool whole_rows);

// Returns a checkpoint's short name: "gguf:../x/tiny_f32.gguf" -> "tiny_f32",
// "synthetic:tiny" as it is.
std::string ShortCheckpointName(const std::string& checkpoint);

}  // namespace samebits::harness::report
