// Batched configurations for a person (batch.h).
#include "harness/analysis/batch.h"

namespace samebits::harness {
namespace {

// Returns the place of step `index` in `cell`, when it ran batched and got
// that far.
std::optional<BatchPlace> PlaceAt(const CellResult& cell, int index) {
  if (index < 0 || static_cast<size_t>(index) >= cell.steps.size()) return std::nullopt;
  return cell.steps[static_cast<size_t>(index)].batch;
}

}  // namespace

std::string DescribeBatch(const Configuration& c) {
  if (!IsBatched(c)) return "";
  std::string out = "batch " + std::to_string(c.batch) + " " + c.batch_schedule;
  if (c.batch_seed != 1) out += ", seed " + std::to_string(c.batch_seed);
  return out;
}

std::string DescribeBatchPlace(const Configuration& c, const std::optional<BatchPlace>& place) {
  std::string out = DescribeBatch(c);
  if (out.empty() || !place) return out;
  return out + ", slot " + std::to_string(place->slot) + " of " + std::to_string(place->sequences) +
         " sequences, row " + std::to_string(place->row) + " of " + std::to_string(place->rows);
}

std::string StepBatchPlace(const CellResult& cell, int index) {
  return DescribeBatchPlace(cell.config, PlaceAt(cell, index));
}

std::string DivergenceBatchPlace(const CellResult& a, const CellResult& b, int index) {
  std::string in_a = StepBatchPlace(a, index);
  std::string in_b = StepBatchPlace(b, index);
  if (in_a.empty()) return in_b;
  if (in_b.empty()) return in_a;
  return a.config.name + ": " + in_a + "; " + b.config.name + ": " + in_b;
}

std::string PlaceInRuns(const std::string& place_a, const std::string& place_b) {
  if (place_a == place_b) return place_a;
  return "A: " + (place_a.empty() ? std::string("unbatched") : place_a) +
         "; B: " + (place_b.empty() ? std::string("unbatched") : place_b);
}

}  // namespace samebits::harness
