// Cells with raw logit dumps for the tests of bundled dumps and of
// `samebits compare`'s logit statistics: rows made from a seed, step hashes
// computed from them as the protocol does (so bundles accept them), and the
// dump written as the engine writes it.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/numerics/hash.h"
#include "harness/analysis/results.h"
#include "harness/analysis/ulp.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness::testing {

inline constexpr int kDumpVocab = 256;
inline constexpr int kDumpSteps = 4;
// The bytes of one cell's dump.
inline constexpr uint64_t kDumpBytes = uint64_t{kDumpSteps} * kDumpVocab * 4;

// Returns kDumpSteps rows of kDumpVocab logits from `seed`, with a NaN
// carrying a payload, an infinity and a negative zero in row 1, so their
// bits are tested too.
inline std::vector<float> DumpValues(int seed) {
  std::vector<float> v(static_cast<size_t>(kDumpSteps) * kDumpVocab);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(static_cast<int>((i * 37 + static_cast<size_t>(seed)) % 509) - 254) /
           16.0f;
  v[kDumpVocab + 3] = std::bit_cast<float>(0x7fc01234u);
  v[kDumpVocab + 4] = std::numeric_limits<float>::infinity();
  v[kDumpVocab + 5] = -0.0f;
  return v;
}

// Writes `values` to `path` as float32 little-endian (PROTOCOL.md).
inline void WriteDump(const std::string& path, const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(values[i]);
    for (int k = 0; k < 4; ++k) bytes[4 * i + k] = static_cast<char>(b >> (8 * k));
  }
  WriteFile(path, bytes);
}

// Returns a PASS cell whose steps are `values`' rows (hashes, argmax,
// NaN and Inf counts as the protocol computes them); its dump written to
// `dump_path` when that is not empty.
inline CellResult DumpedCell(const std::string& config, const std::vector<float>& values,
                             const std::string& dump_path) {
  CellResult c = MakeCell("synthetic:tiny", "classic", config, 7, kDumpSteps);
  c.vocab_size = kDumpVocab;
  for (int r = 0; r < kDumpSteps; ++r) {
    const std::span<const float> row(values.data() + static_cast<size_t>(r) * kDumpVocab,
                                     kDumpVocab);
    const numerics::LogitHashes h = numerics::HashLogits(row);
    StepRecord& s = c.steps[static_cast<size_t>(r)];
    s.fnv1a64 = h.fnv1a64;
    s.xxh3_64 = h.xxh3_64;
    s.nan_count = h.nan_count;
    s.inf_count = h.inf_count;
    s.argmax = ArgMax(row);
    s.token = s.argmax;
  }
  if (!dump_path.empty()) {
    WriteDump(dump_path, values);
    c.dump_path = dump_path;
  }
  return c;
}

// Returns `x` moved `ulps` representable floats up (x > 0).
inline float UlpsAbove(float x, uint32_t ulps) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) + ulps);
}

}  // namespace samebits::harness::testing
