// Running a determinism card (card_run.h).
#include "harness/runner/card_run.h"

#include <algorithm>

#include "harness/runner/cell_runner.h"
#include "harness/runner/forced_scenario.h"
#include "harness/runner/matrix.h"
#include "harness/runner/profile_cell.h"

namespace samebits::runner {

std::vector<CardVariant> CardVariants(const EngineProfile& profile,
                                      std::vector<std::string>* notes) {
  return OneAxisAtATime(profile, profile.card_baseline, notes);
}

namespace {

// Measures the baseline cell `baseline` of `profile` against samebits-engine's
// reference pass on the same checkpoint and scenario, into `table`.
void MeasureReferenceConformance(const EngineProfile& profile, const CardOptions& options,
                                 const std::string& checkpoint, const std::string& scenario_file,
                                 const harness::CellResult& baseline, harness::CardTable& table) {
  if (baseline.dump_path.empty()) {
    table.reference_problem = "the baseline wrote no logit dump";
    return;
  }
  Cell cell;
  cell.checkpoint = checkpoint;
  cell.scenario_file = scenario_file;
  cell.scenario = ScenarioName(scenario_file);
  cell.config.name = "reference";
  cell.config.kernels = "reference";
  RunnerOptions runner;
  runner.engine = options.reference_program;
  runner.timeout_seconds = options.timeout_seconds;
  runner.dump_dir = options.dump_dir;
  runner.passthrough = options.passthrough;
  const harness::CellResult reference = RunCell(cell, runner);
  if (reference.code != harness::ResultCode::kPass || reference.dump_path.empty()) {
    table.reference_problem = "samebits-engine's reference pass did not run it (" +
                              std::string(harness::ResultCodeName(reference.code)) + ": " +
                              reference.message + ")";
    return;
  }
  harness::RunResult a, b;
  a.cells = {reference};
  b.cells = {baseline};
  harness::ConformOptions conform;
  if (profile.max_nmse) conform.threshold.max_nmse = *profile.max_nmse;
  // Where the engine's greedy tokens leave the reference's, it is rerun with
  // the reference's tokens, so its later steps are measured too.
  conform.rerun_b_forced = [&](const harness::CellResult& a, const harness::CellResult&) {
    return RerunWithForcedTokens(scenario_file, a, options.dump_dir, [&](const std::string& file) {
      ProfileCellOptions o;
      o.program = options.program;
      o.timeout_seconds = options.timeout_seconds;
      o.passthrough = options.passthrough;
      o.dump_file = options.dump_dir + "/card-forced.f32";
      harness::CellResult forced =
          RunProfileCell(profile, profile.card_baseline, checkpoint, file, o);
      forced.scenario = a.scenario;
      return forced;
    });
  };
  const harness::RunConformance c =
      harness::ConformRuns(a, b, "samebits-engine reference", profile.name, conform);
  if (c.pairs.empty()) {
    table.reference_problem = "no pair to compare";
  } else {
    table.reference_conformance = c.pairs.front();
  }
}

// Returns the profile's reason when it declares the feed table's row
// `value` to differ on `checkpoint` (axis `feed`), else "".
std::string FeedKnownReason(const EngineProfile& profile, const std::string& value,
                            const std::string& checkpoint) {
  for (const KnownDifference& k : profile.known_differences) {
    if (k.axis != kFeedTableAxis) continue;
    if (!k.values.empty() && std::find(k.values.begin(), k.values.end(), value) == k.values.end())
      continue;
    // The feed table runs three scenarios of its own, no other.
    if (!k.scenarios.empty()) continue;
    if (k.checkpoints.empty() || MatchesAnyPattern(k.checkpoints, checkpoint)) return k.reason;
  }
  return "";
}

}  // namespace

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
      } else if (!options.reference_program.empty()) {
        MeasureReferenceConformance(profile, options, checkpoint, scenario_file, baseline, table);
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
          const KnownDifference* known =
              FindKnownDifference(profile, v.config, checkpoint, ScenarioName(scenario_file));
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
    if (options.feed_scenario_files.size() == 3) {
      // The prompt fed whole, as a prefill and one extend, token by token:
      // the same tokens at the same positions, row for row.
      const std::vector<std::string>& files = options.feed_scenario_files;
      harness::CardTable table;
      table.checkpoint = checkpoint;
      table.scenario = "feed: " + ScenarioName(files[0]) + " (whole) vs " + ScenarioName(files[1]) +
                       " (" + kFeedExtend + "), " + ScenarioName(files[2]) + " (" + kFeedToken +
                       ")";
      table.baseline = profile.card_baseline.name;
      const harness::CellResult whole =
          RunProfileCell(profile, profile.card_baseline, checkpoint, files[0], options_for());
      if (whole.code != harness::ResultCode::kPass) {
        table.baseline_problem = "the baseline " + profile.card_baseline.name + " is " +
                                 harness::ResultCodeName(whole.code) + " on " +
                                 ScenarioName(files[0]) + ": " + whole.message;
      }
      for (size_t i = 1; i < 3; ++i) {
        const char* value = i == 1 ? kFeedExtend : kFeedToken;
        harness::CardRow row;
        if (!table.baseline_problem.empty()) {
          row.outcome = whole.code == harness::ResultCode::kUnsupported
                            ? harness::CardOutcome::kNotRun
                            : harness::CardOutcome::kBroken;
          row.detail = "not run: the baseline did not pass";
        } else {
          harness::CellResult cell =
              RunProfileCell(profile, profile.card_baseline, checkpoint, files[i], options_for());
          // A row's kind says how it was fed (a prefill row there is an
          // extend row here), which is what differs by design: the rows are
          // judged on their positions, fed tokens, choices and hashes.
          for (size_t k = 0; k < std::min(cell.steps.size(), whole.steps.size()); ++k) {
            cell.steps[k].kind = whole.steps[k].kind;
          }
          row = harness::JudgeCardRow(whole, cell, FeedKnownReason(profile, value, checkpoint), "");
        }
        row.axis = kFeedTableAxis;
        row.value = value;
        row.config = profile.card_baseline.name + " on " + ScenarioName(files[i]);
        table.rows.push_back(std::move(row));
      }
      card.tables.push_back(std::move(table));
    }
  }
  return card;
}

}  // namespace samebits::runner
