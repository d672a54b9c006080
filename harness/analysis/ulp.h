// ULP distances between float32 values, for reports that say how far apart
// two configurations' logits are once their hashes differ.
//
// The distance maps each float's bits onto a signed integer that increases
// with the float's value (the "ordered integer" mapping: negative floats are
// reflected so that -0 and +0 both map to 0), then subtracts. So adjacent
// floats are 1 apart, the largest finite float and infinity are 1 apart, and
// -0 and +0 are 0 apart (their bits still differ, which the element count of
// `CompareLogitRows` records).
//
// NaN: two NaNs are 0 apart whatever their payloads (neither is "larger");
// a NaN and a number have no distance, reported as `kUlpNaNMismatch`.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace samebits::harness {

inline constexpr uint64_t kUlpNaNMismatch = std::numeric_limits<uint64_t>::max();

// Returns the number of representable floats between `a` and `b` (0 when
// they are equal or both NaN), or `kUlpNaNMismatch` when exactly one is NaN.
uint64_t UlpDistance(float a, float b);

// Returns the ULP distance for a person ("3", or "NaN vs number").
std::string FormatUlp(uint64_t ulp);

// How two rows of logits (one step, two configurations) differ.
struct RowComparison {
  int64_t differing = 0;      // elements whose bits differ
  uint64_t max_ulp = 0;       // largest UlpDistance among them (may be kUlpNaNMismatch)
  bool nan_mismatch = false;  // some element is NaN in one row and not the other
  double max_abs_diff = 0;    // largest |a - b| over elements where both are finite
  // The row's scale: the largest |value| over the finite elements of both
  // rows. It is the denominator of `max_rel_diff`, so that a large ULP count
  // on a logit near zero reads as the tiny difference it is at the row's
  // scale (an element-wise |a - b| / |a| would alarm there too).
  double row_max_abs = 0;
  double max_rel_diff = 0;         // max_abs_diff / row_max_abs (0 when the scale is 0)
  int argmax_a = 0, argmax_b = 0;  // ties to the lower id; NaN never wins
};

// Returns the comparison of two rows of the same length. Throws
// std::invalid_argument when the lengths differ.
RowComparison CompareLogitRows(std::span<const float> a, std::span<const float> b);

// Returns the index of the largest value of `row`, ties to the lower id,
// NaNs skipped (0 when the row is empty or all NaN); the protocol's argmax.
int ArgMax(std::span<const float> row);

// A raw logit dump (engine/protocol/PROTOCOL.md "Raw logit dumps"): float32
// little-endian, `vocab_size` values per row, rows in step order, no header.
struct LogitDump {
  int64_t rows = 0;
  int64_t vocab_size = 0;
  std::vector<float> values;  // rows * vocab_size

  // Returns row `r`.
  std::span<const float> Row(int64_t r) const {
    return {values.data() + r * vocab_size, static_cast<size_t>(vocab_size)};
  }
};

// Returns the dump at `path`, which must hold exactly `rows` rows (the number
// of steps the child reported). Throws std::runtime_error naming the file and
// the problem: unreadable, empty, or a size that is not `rows` whole rows of
// float32 values.
LogitDump ReadLogitDump(const std::string& path, int64_t rows);

}  // namespace samebits::harness
