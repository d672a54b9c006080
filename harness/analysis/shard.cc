// Sharded gates (shard.h).
#include "harness/analysis/shard.h"

#include <xxhash.h>

#include <charconv>

#include "harness/analysis/machine_name.h"

namespace samebits::harness {
namespace {

// Returns the bucket (0 to `buckets` - 1) of `key` by Lamping and Veach's
// jump consistent hash ("A Fast, Minimal Memory, Consistent Hash
// Algorithm", 2014): growing `buckets` by one moves only the keys that
// land in the new bucket.
int JumpConsistentHash(uint64_t key, int buckets) {
  int64_t b = -1;
  int64_t j = 0;
  while (j < buckets) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = static_cast<int64_t>(static_cast<double>(b + 1) * (static_cast<double>(1LL << 31) /
                                                           static_cast<double>((key >> 33) + 1)));
  }
  return static_cast<int>(b);
}

// Returns whether `text` is a whole decimal number from 1 to kMaxShards,
// setting `*out`.
bool ParseCount(const std::string& text, int* out) {
  if (text.empty() || text.size() > 5) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size() && *out >= 1 &&
         *out <= kMaxShards;
}

}  // namespace

std::string ParseShardSpec(const std::string& text, ShardSpec* out) {
  const std::string expected =
      "expected K/N, shard K of N with 1 <= K <= N <= " + std::to_string(kMaxShards) +
      " (such as 2/4)";
  const size_t slash = text.find('/');
  ShardSpec spec;
  if (slash == std::string::npos || !ParseCount(text.substr(0, slash), &spec.index) ||
      !ParseCount(text.substr(slash + 1), &spec.count))
    return "shard '" + text + "': " + expected;
  if (spec.index > spec.count)
    return "shard '" + text + "': shard " + std::to_string(spec.index) + " of " +
           std::to_string(spec.count) + " does not exist; " + expected;
  *out = spec;
  return "";
}

std::string ShardGroupProblem(const std::string& group) {
  return LabelProblem("group id", group);
}

int ShardOfCell(const std::string& checkpoint, const std::string& scenario,
                const std::string& config_name, int count) {
  // NUL separates the fields: no field holds one, so the key is unambiguous.
  std::string key = checkpoint;
  key += '\0';
  key += scenario;
  key += '\0';
  key += config_name;
  return JumpConsistentHash(XXH3_64bits(key.data(), key.size()), count) + 1;
}

std::vector<Cell> CellsOfShard(const std::vector<Cell>& cells, const ShardSpec& shard) {
  std::vector<Cell> out;
  for (const Cell& c : cells) {
    if (ShardOfCell(c.checkpoint, c.scenario, c.config.name, shard.count) == shard.index)
      out.push_back(c);
  }
  return out;
}

}  // namespace samebits::harness
