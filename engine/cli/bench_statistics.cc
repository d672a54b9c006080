// `bench`'s statistics (bench_statistics.h).
#include "engine/cli/bench_statistics.h"

#include <algorithm>

namespace samebits::cli {

Spread SpreadOf(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

IdentityVerdict JudgeIdentity(const std::vector<BenchRecord>& records) {
  IdentityVerdict verdict;
  for (const BenchRecord& c : records) {
    bool same = true;
    for (size_t r = 1; r < c.decode_hashes.size(); ++r) {
      same = same && c.decode_hashes[r] == c.decode_hashes[0];
    }
    for (size_t r = 1; r < c.prefill_hashes.size(); ++r) {
      same = same && c.prefill_hashes[r] == c.prefill_hashes[0];
    }
    verdict.runs_identical.push_back(same);
    verdict.all_identical = verdict.all_identical && same;
  }
  for (size_t i = 1; i < records.size(); ++i) {
    const std::vector<uint64_t>& a = records[0].decode_hashes[0];
    const std::vector<uint64_t>& b = records[i].decode_hashes[0];
    IdentityVerdict::Pair pair;
    pair.record = i;
    pair.decode_steps = std::min(a.size(), b.size());
    pair.decode_identical =
        pair.decode_steps > 0 && std::equal(a.begin(), a.begin() + pair.decode_steps, b.begin());
    pair.prefill_identical = records[0].prefill_hashes[0] == records[i].prefill_hashes[0];
    verdict.all_identical =
        verdict.all_identical && pair.decode_identical && pair.prefill_identical;
    verdict.against_base.push_back(pair);
  }
  return verdict;
}

}  // namespace samebits::cli
