#include "harness/analysis/ulp.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace samebits::harness {
namespace {

// Returns an integer that orders like the float `x` (NaN excluded): the bits
// of a non-negative float already order like its value; a negative float's
// magnitude bits are reflected below zero.
int64_t OrderedKey(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const int64_t magnitude = bits & 0x7FFFFFFFu;
  return (bits & 0x80000000u) ? -magnitude : magnitude;
}

float LoadLittleEndianFloat(const unsigned char* p) {
  const uint32_t bits = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                        static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  return std::bit_cast<float>(bits);
}

}  // namespace

uint64_t UlpDistance(float a, float b) {
  const bool nan_a = std::isnan(a), nan_b = std::isnan(b);
  if (nan_a || nan_b) return (nan_a && nan_b) ? 0 : kUlpNaNMismatch;
  const int64_t d = OrderedKey(a) - OrderedKey(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

std::string FormatUlp(uint64_t ulp) {
  return ulp == kUlpNaNMismatch ? std::string("NaN vs number") : std::to_string(ulp);
}

int ArgMax(std::span<const float> row) {
  int best = -1;
  for (size_t i = 0; i < row.size(); ++i) {
    if (std::isnan(row[i])) continue;
    if (best < 0 || row[i] > row[static_cast<size_t>(best)]) best = static_cast<int>(i);
  }
  return best < 0 ? 0 : best;
}

RowComparison CompareLogitRows(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) {
    throw std::invalid_argument("logit rows of different lengths (" + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + ")");
  }
  RowComparison c;
  for (size_t i = 0; i < a.size(); ++i) {
    for (float v : {a[i], b[i]}) {
      if (std::isfinite(v)) c.row_max_abs = std::max(c.row_max_abs, std::fabs(double{v}));
    }
    if (std::bit_cast<uint32_t>(a[i]) == std::bit_cast<uint32_t>(b[i])) continue;
    ++c.differing;
    const uint64_t ulp = UlpDistance(a[i], b[i]);
    if (ulp == kUlpNaNMismatch) c.nan_mismatch = true;
    if (ulp > c.max_ulp) c.max_ulp = ulp;
    if (std::isfinite(a[i]) && std::isfinite(b[i])) {
      const double diff = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
      if (diff > c.max_abs_diff) c.max_abs_diff = diff;
    }
  }
  if (c.row_max_abs > 0) c.max_rel_diff = c.max_abs_diff / c.row_max_abs;
  c.argmax_a = ArgMax(a);
  c.argmax_b = ArgMax(b);
  return c;
}

LogitDump ReadLogitDump(const std::string& path, int64_t rows) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("logit dump " + path + ": cannot be opened");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) throw std::runtime_error("logit dump " + path + ": cannot read its size");
  if (rows <= 0) {
    throw std::runtime_error("logit dump " + path + ": the child reported no steps to match it");
  }
  if (size == 0) throw std::runtime_error("logit dump " + path + ": the file is empty");
  const auto bytes = static_cast<int64_t>(size);
  if (bytes % 4 != 0) {
    throw std::runtime_error("logit dump " + path + ": " + std::to_string(bytes) +
                             " bytes is not a whole number of float32 values");
  }
  const int64_t floats = bytes / 4;
  if (floats % rows != 0) {
    throw std::runtime_error("logit dump " + path + ": " + std::to_string(floats) +
                             " float32 values do not divide into " + std::to_string(rows) +
                             " rows (one per step)");
  }
  std::vector<unsigned char> raw(static_cast<size_t>(bytes));
  if (!in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(bytes))) {
    throw std::runtime_error("logit dump " + path + ": read failed");
  }
  LogitDump dump;
  dump.rows = rows;
  dump.vocab_size = floats / rows;
  dump.values.resize(static_cast<size_t>(floats));
  for (int64_t i = 0; i < floats; ++i) {
    dump.values[static_cast<size_t>(i)] = LoadLittleEndianFloat(raw.data() + 4 * i);
  }
  return dump;
}

}  // namespace samebits::harness
