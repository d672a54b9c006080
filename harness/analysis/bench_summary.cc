// The summary of an A/B bench's samples (bench_summary.h).
#include "harness/analysis/bench_summary.h"

#include <functional>
#include <utility>

#include "harness/analysis/compare.h"

namespace samebits::harness {
namespace {

// The counted runs' medians per side and their paired ratio B/A for the
// time `value` gives. Within a round the runs are A B B A: the first A
// pairs with the first B, the second B with the second A (neighbours in
// time).
struct PairedTimes {
  double median_a = 0, median_b = 0;
  PairedRatio ratio;
};

PairedTimes PairTimes(const std::vector<BenchSample>& samples,
                      const std::function<double(const BenchSample&)>& value,
                      bool with_ratio = true) {
  PairedTimes out;
  std::vector<double> a, b, pending_a, pending_b;
  std::vector<std::pair<double, double>> pairs;
  int current_round = -2;
  for (const BenchSample& x : samples) {
    if (!x.ok || x.round < 0) continue;
    if (x.round != current_round) {
      current_round = x.round;
      pending_a.clear();
      pending_b.clear();
    }
    const double v = value(x);
    (x.side == 'A' ? a : b).push_back(v);
    (x.side == 'A' ? pending_a : pending_b).push_back(v);
    if (!pending_a.empty() && !pending_b.empty()) {
      pairs.push_back({pending_a.front(), pending_b.front()});
      pending_a.erase(pending_a.begin());
      pending_b.erase(pending_b.begin());
    }
  }
  if (!a.empty()) out.median_a = Median(a);
  if (!b.empty()) out.median_b = Median(b);
  if (with_ratio) out.ratio = PairedRatioOf(pairs);
  return out;
}

// The per-token summary of one phase, when every counted run reported it.
PhaseSummary SummarizePhase(const std::vector<BenchSample>& samples,
                            double protocol::PhaseTimes::*ms,
                            int64_t protocol::PhaseTimes::*tokens) {
  PhaseSummary out;
  bool any = false;
  for (const BenchSample& x : samples) {
    if (!x.ok || x.round < 0) continue;
    // A phase with no time (a run too short for the clock) has no ratio.
    if (!x.phases || (*x.phases).*tokens <= 0 || !((*x.phases).*ms > 0)) return out;
    if (!any) out.tokens = (*x.phases).*tokens;
    any = true;
  }
  if (!any) return out;
  const PairedTimes t = PairTimes(samples, [&](const BenchSample& x) {
    return (*x.phases).*ms / static_cast<double>((*x.phases).*tokens);
  });
  out.known = true;
  out.median_a_ms_per_token = t.median_a;
  out.median_b_ms_per_token = t.median_b;
  out.ratio = t.ratio;
  return out;
}

}  // namespace

BenchSummary SummarizeBench(const std::vector<BenchSample>& samples) {
  BenchSummary s;
  const BenchSample* first_a = nullptr;
  const BenchSample* first_b = nullptr;
  for (const BenchSample& x : samples) {
    if (!x.ok) {
      s.all_ran = false;
      continue;
    }
    const BenchSample*& first = x.side == 'A' ? first_a : first_b;
    if (first == nullptr) {
      first = &x;
    } else if (auto d = FirstStepDifference(first->outputs, x.outputs)) {
      (x.side == 'A' ? s.a_repeatable : s.b_repeatable) = false;
      if (s.identity_detail.empty()) {
        s.identity_detail = std::string(1, x.side) +
                            " is not repeatable: two of its runs differ at step " +
                            std::to_string(d->index) + ": " + d->detail;
      }
    }
  }
  if (first_a != nullptr && first_b != nullptr) {
    if (auto d = FirstStepDifference(first_a->outputs, first_b->outputs)) {
      s.identical = false;
      s.identity_detail = "B changes the bits: its outputs first differ from A's at step " +
                          std::to_string(d->index) + " (" + d->kind + ", position " +
                          std::to_string(d->position) + "): " + d->detail;
    }
  } else {
    s.identical = false;
    s.identity_detail = "a side never ran to completion, so identity was not checked";
  }
  const PairedTimes done = PairTimes(samples, [](const BenchSample& x) { return x.elapsed_ms; });
  const PairedTimes wall = PairTimes(
      samples, [](const BenchSample& x) { return x.wall_ms; }, false);
  s.median_a_ms = done.median_a;
  s.median_b_ms = done.median_b;
  s.median_a_wall_ms = wall.median_a;
  s.median_b_wall_ms = wall.median_b;
  s.ratio = done.ratio;
  s.prefill = SummarizePhase(samples, &protocol::PhaseTimes::prefill_ms,
                             &protocol::PhaseTimes::prefill_tokens);
  s.decode = SummarizePhase(samples, &protocol::PhaseTimes::decode_ms,
                            &protocol::PhaseTimes::decode_tokens);
  return s;
}

}  // namespace samebits::harness
