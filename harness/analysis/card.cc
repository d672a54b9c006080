// The determinism card's judgement (card.h).
#include "harness/analysis/card.h"

#include <algorithm>

#include "harness/analysis/compare.h"
#include "harness/analysis/conformance.h"
#include "harness/analysis/logit_difference.h"

namespace samebits::harness {

const CardOutcomeInfo& OutcomeInfo(CardOutcome outcome) {
  for (const CardOutcomeInfo& info : kCardOutcomes) {
    if (info.outcome == outcome) return info;
  }
  return kCardOutcomes[0];
}

int Card::ExitCode() const {
  bool ran = false, failed = false;
  for (const CardTable& t : tables) {
    for (const CardRow& r : t.rows) {
      ran = ran || (r.outcome != CardOutcome::kNotRun && r.outcome != CardOutcome::kBroken);
      failed = failed || OutcomeInfo(r.outcome).failure;
    }
  }
  if (!ran) return 2;
  const ProbePower power = MeasureProbePower(*this);
  return failed || (power.measured && !power.seen) ? 1 : 0;
}

ProbePower MeasureProbePower(const Card& card) {
  ProbePower power;
  if (card.control.empty()) return power;
  power.measured = true;
  const std::string lead = "probe power: ";
  int tables = 0, differed = 0, first_step = -1;
  for (const CardTable& t : card.tables) {
    for (const CardRow& r : t.rows) {
      if (!r.control || !t.baseline_problem.empty()) continue;
      ++tables;
      if (r.outcome != CardOutcome::kKnown) {
        power.line = lead + "NONE: the control " + card.control + " " +
                     (r.outcome == CardOutcome::kFixed
                          ? std::string("is identical to the baseline")
                          : std::string("gave no output to compare (") +
                                OutcomeInfo(r.outcome).name + ": " + r.detail + ")") +
                     " on " + t.checkpoint + " / " + t.scenario +
                     "; this card could not see a difference there, so its verdict is invalid";
        return power;
      }
      ++differed;
      first_step = first_step < 0 ? r.first_step : std::min(first_step, r.first_step);
    }
  }
  if (tables == 0) {
    power.line = lead + "NONE: the control " + card.control +
                 " ran in no table whose baseline ran, so this card's verdict is invalid";
    return power;
  }
  power.seen = true;
  power.line = lead + "the control " + card.control + " differs from the baseline in " +
               std::to_string(differed) + " of " + std::to_string(tables) + " tables, from step " +
               std::to_string(first_step);
  return power;
}

namespace {

// Measures the steps both dumps hold while the two contexts are the same
// (same kind, position and input token), into `row`.
void MeasureDumps(const CellResult& baseline, const CellResult& variant,
                  const std::string& dump_base_dir, CardRow* row) {
  std::optional<harness::LogitDump> a, b;
  try {
    a = LoadCellDump(baseline, dump_base_dir);
    b = LoadCellDump(variant, dump_base_dir);
  } catch (const std::exception& e) {
    row->detail += "; logits not measured: " + std::string(e.what());
    return;
  }
  if (!a || !b || a->vocab_size != b->vocab_size) return;
  ConformanceMeter meter(ConformanceThreshold{});
  const size_t n = std::min(baseline.steps.size(), variant.steps.size());
  for (size_t i = 0; i < n; ++i) {
    const StepRecord& x = baseline.steps[i];
    const StepRecord& y = variant.steps[i];
    if (x.kind != y.kind || x.position != y.position || x.input_token != y.input_token) break;
    const StepConformance& s =
        meter.AddStep(x.index, a->Row(static_cast<int64_t>(i)), b->Row(static_cast<int64_t>(i)));
    row->nmse_by_position.emplace_back(x.position, s.nmse);
    if (x.index == row->first_step) {
      row->first_nmse = s.nmse;
      row->first_kld = s.kl_divergence;
      row->argmax_moved = !s.top1_agrees;
    }
  }
  if (!meter.Steps().empty()) row->max_nmse = meter.Summary().max_nmse;
}

}  // namespace

CardRow JudgeCardRow(const CellResult& baseline, const CellResult& variant,
                     const std::string& known_reason, const std::string& dump_base_dir) {
  CardRow row;
  row.config = variant.config.name;
  row.known_reason = known_reason;
  if (variant.code == ResultCode::kUnsupported) {
    row.outcome = CardOutcome::kNotRun;
    row.detail = variant.message;
    return row;
  }
  if (variant.code != ResultCode::kPass) {
    row.outcome = CardOutcome::kBroken;
    row.detail = std::string(ResultCodeName(variant.code)) + ": " + variant.message;
    return row;
  }
  if (variant.repeats && variant.repeats->count > 1) {
    const int distinct = variant.repeats->distinct;
    row.repeats = std::to_string(variant.repeats->count) +
                  " repeats in one process: " + std::to_string(distinct) + " distinct output" +
                  (distinct == 1 ? "" : "s");
  }
  row.sampling = SamplingText(variant);
  // A seed that does not reproduce its sample, or seeds that do not change
  // it, break the row whatever its greedy steps match: no profile declares
  // that away.
  if (const std::string sampling_defect = SamplingDefectText(variant); !sampling_defect.empty()) {
    row.outcome = CardOutcome::kBroken;
    row.detail = sampling_defect;
    return row;
  }
  // Repeats in one process that disagree among themselves: the row differs
  // from its first differing step, whatever its first repeat matched.
  if (const std::string repeat_variance = RepeatVarianceText(variant); !repeat_variance.empty()) {
    row.outcome = known_reason.empty() ? CardOutcome::kDiffers : CardOutcome::kKnown;
    row.first_step = variant.repeats->first_step;
    if (row.first_step < static_cast<int>(variant.steps.size()))
      row.first_position = variant.steps[row.first_step].position;
    row.detail = repeat_variance;
    return row;
  }
  const std::optional<StepDifference> d = FirstStepDifference(baseline.steps, variant.steps);
  if (!d) {
    row.outcome = known_reason.empty() ? CardOutcome::kIdentical : CardOutcome::kFixed;
    if (!known_reason.empty()) {
      row.detail =
          "identical to the baseline, though the profile declares it to differ: remove the "
          "declaration";
    }
    return row;
  }
  row.outcome = known_reason.empty() ? CardOutcome::kDiffers : CardOutcome::kKnown;
  row.first_step = d->index;
  row.first_position = d->position;
  row.detail = d->detail;
  MeasureDumps(baseline, variant, dump_base_dir, &row);
  return row;
}

}  // namespace samebits::harness
