// The grid a determinism card opens with (card_grid.h).
#include "harness/report/card_grid.h"

#include <algorithm>

namespace samebits::harness::report {

std::string ShortCheckpointName(const std::string& checkpoint) {
  const size_t colon = checkpoint.find(':');
  const std::string kind = colon == std::string::npos ? "" : checkpoint.substr(0, colon);
  if (kind == "synthetic" || kind == "toy") return checkpoint;
  std::string name = colon == std::string::npos ? checkpoint : checkpoint.substr(colon + 1);
  while (name.size() > 1 && name.back() == '/') name.pop_back();  // a safetensors folder
  if (const size_t slash = name.rfind('/'); slash != std::string::npos) name.erase(0, slash + 1);
  if (const size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0) name.erase(dot);
  return name.empty() ? checkpoint : name;
}

CardGrid BuildCardGrid(const Card& card) {
  CardGrid grid;
  // A scenario is named in a column only where the card has several; a
  // feed table's rows (their own axis) join its checkpoint's column then.
  bool several_scenarios = false;
  const CardTable* first = nullptr;
  for (const CardTable& t : card.tables) {
    if (t.feed) continue;
    if (first == nullptr) first = &t;
    several_scenarios |= t.scenario != first->scenario;
  }
  for (const CardTable& table : card.tables) {
    const std::string column =
        ShortCheckpointName(table.checkpoint) + (!several_scenarios ? ""
                                                 : table.feed       ? " / feed"
                                                                    : " / " + table.scenario);
    auto at = std::find(grid.columns.begin(), grid.columns.end(), column);
    if (at == grid.columns.end()) {
      grid.columns.push_back(column);
      at = grid.columns.end() - 1;
    }
    const size_t c = static_cast<size_t>(at - grid.columns.begin());
    for (const CardRow& row : table.rows) {
      auto it = std::find_if(grid.rows.begin(), grid.rows.end(), [&](const CardGrid::Row& r) {
        return r.axis == row.axis && r.value == row.value && r.config == row.config;
      });
      if (it == grid.rows.end()) {
        grid.rows.push_back({row.axis, row.value, row.config, {}});
        it = grid.rows.end() - 1;
      }
      if (it->cells.size() <= c) it->cells.resize(c + 1, nullptr);
      it->cells[c] = &row;
    }
  }
  for (CardGrid::Row& row : grid.rows) row.cells.resize(grid.columns.size(), nullptr);
  return grid;
}

std::string GridMark(const CardRow* row) {
  if (row == nullptr) return "";
  switch (row->outcome) {
    case CardOutcome::kIdentical:
      return "=";
    case CardOutcome::kKnown:
      return "K" + std::to_string(row->first_step);
    case CardOutcome::kDiffers:
      return "D" + std::to_string(row->first_step);
    case CardOutcome::kFixed:
      return "F";
    case CardOutcome::kNotRun:
      return "-";
    case CardOutcome::kBroken:
      return "B";
  }
  return "?";
}

std::string GridRowLabel(const CardGrid::Row& row) {
  if (row.axis == kCardControlAxis) return "negative control (" + row.config + ")";
  return row.axis + " = " + row.value + " (" + row.config + ")";
}

std::string GridLegend(bool whole_rows) {
  return std::string(whole_rows ? "= identical to the baseline, every step's bits"
                                : "= identical to the baseline in all the engine read back") +
         "; Kn KNOWN (declared by the profile), "
         "first differing step n; Dn DIFFERS (undeclared: fails), first differing step n; F "
         "FIXED: identical though declared to differ (fails); - UNSUPPORTED here; B BROKEN: the "
         "engine failed (fails); blank: not a row of that table.";
}

}  // namespace samebits::harness::report
