// Running a determinism card (card_run.h).
#include "harness/runner/card_run.h"

#include "harness/runner/matrix.h"
#include "harness/runner/profile_cell.h"

namespace samebits::runner {

std::vector<CardVariant> CardVariants(const EngineProfile& profile,
                                      std::vector<std::string>* notes) {
  return OneAxisAtATime(profile, profile.card_baseline, notes);
}

harness::Card RunCard(const EngineProfile& profile, const CardOptions& options) {
  harness::Card card;
  card.engine = profile.name;
  card.profile_file = profile.file;
  card.baseline = profile.card_baseline.name;
  const std::vector<CardVariant> variants = CardVariants(profile, &card.notes);
  int dumps = 0;
  const auto options_for = [&]() {
    ProfileCellOptions o;
    o.program = options.program;
    o.timeout_seconds = options.timeout_seconds;
    o.passthrough = options.passthrough;
    if (!options.dump_dir.empty() && !profile.dump_logits.empty()) {
      o.dump_file = options.dump_dir + "/card-" + std::to_string(dumps++) + ".f32";
    }
    return o;
  };
  for (const std::string& checkpoint : options.checkpoints) {
    for (const std::string& scenario_file : options.scenario_files) {
      harness::CardTable table;
      table.checkpoint = checkpoint;
      table.scenario = ScenarioName(scenario_file);
      table.baseline = profile.card_baseline.name;
      const harness::CellResult baseline =
          RunProfileCell(profile, profile.card_baseline, checkpoint, scenario_file, options_for());
      if (baseline.code != harness::ResultCode::kPass) {
        table.baseline_problem = "the baseline " + profile.card_baseline.name + " is " +
                                 harness::ResultCodeName(baseline.code) + ": " + baseline.message;
      }
      for (const CardVariant& v : variants) {
        harness::CardRow row;
        if (!table.baseline_problem.empty()) {
          row.config = v.config.name;
          row.outcome = baseline.code == harness::ResultCode::kUnsupported
                            ? harness::CardOutcome::kNotRun
                            : harness::CardOutcome::kBroken;
          row.detail = "not run: the baseline did not pass";
        } else {
          const KnownDifference* known = FindKnownDifference(profile, v.config, checkpoint);
          const harness::CellResult cell =
              RunProfileCell(profile, v.config, checkpoint, scenario_file, options_for());
          row = harness::JudgeCardRow(baseline, cell, known != nullptr ? known->reason : "", "");
        }
        row.axis = v.axis;
        row.value = v.value;
        table.rows.push_back(std::move(row));
      }
      card.tables.push_back(std::move(table));
    }
  }
  return card;
}

}  // namespace samebits::runner
