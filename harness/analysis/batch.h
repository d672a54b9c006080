// Batched configurations as a person reads them: a configuration with a
// batch runs the scenario's sequence beside batch - 1 companion sequences
// (samebits-engine run --batch), and must give the same bits as batch 1.
// These say which batch and where in it a difference showed.
#pragma once

#include <optional>
#include <string>

#include "harness/analysis/results.h"

namespace samebits::harness {

// Returns whether `c` runs the scenario's sequence with companions.
inline bool IsBatched(const Configuration& c) {
  return c.batch > 1;
}

// Returns "batch 8 staggered" ("batch 4 together, seed 7" when the seed is
// not the default 1); "" for an unbatched configuration.
std::string DescribeBatch(const Configuration& c);

// Returns the batch and where the scenario's sequence sat at a step:
// "batch 8 staggered, slot 3 of 6 sequences, row 9 of 14" (slot and row
// 0-based, as the engine reports them); without a place, the batch alone;
// "" for an unbatched configuration.
std::string DescribeBatchPlace(const Configuration& c, const std::optional<BatchPlace>& place);

// Returns DescribeBatchPlace for step `index` of `cell` (the batch alone
// when the cell has no such step or it carries no place).
std::string StepBatchPlace(const CellResult& cell, int index);

// Returns where step `index` sat in each batched side of a divergence
// between `a` (the baseline) and `b`: that side's DescribeBatchPlace, named
// by its configuration when both sides are batched; "" when neither is.
std::string DivergenceBatchPlace(const CellResult& a, const CellResult& b, int index);

// Returns the places of one cell's step in two runs (A and B, each a
// StepBatchPlace): once when they are the same, else "A: ...; B: ...".
std::string PlaceInRuns(const std::string& place_a, const std::string& place_b);

}  // namespace samebits::harness
