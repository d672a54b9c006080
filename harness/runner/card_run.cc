// Running a determinism card (card_run.h).
#include "harness/runner/card_run.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

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
  runner.own_profile = options.reference_profile.get();
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

// The row of a table whose baseline did not pass: nothing to compare with.
harness::CardRow NotRunRow(const harness::CellResult& baseline) {
  harness::CardRow row;
  row.outcome = baseline.code == harness::ResultCode::kUnsupported ? harness::CardOutcome::kNotRun
                                                                   : harness::CardOutcome::kBroken;
  row.detail = "not run: the baseline did not pass";
  return row;
}

// Runs the cells of one card, numbering their logit dumps.
class CardRunner {
 public:
  CardRunner(const EngineProfile& profile, const CardOptions& options)
      : profile_(profile), options_(options) {}

  // The baseline and every one-axis variant on one checkpoint and scenario.
  harness::CardTable AxisTable(const std::vector<CardVariant>& variants,
                               const std::string& checkpoint, const std::string& scenario_file) {
    harness::CardTable table;
    table.checkpoint = checkpoint;
    table.scenario = ScenarioName(scenario_file);
    table.baseline = profile_.card_baseline.name;
    const harness::CellResult baseline = Run(profile_.card_baseline, checkpoint, scenario_file);
    if (baseline.code != harness::ResultCode::kPass) {
      table.baseline_problem = "the baseline " + profile_.card_baseline.name + " is " +
                               harness::ResultCodeName(baseline.code) + ": " + baseline.message;
    } else if (!options_.reference_program.empty()) {
      MeasureReferenceConformance(profile_, options_, checkpoint, scenario_file, baseline, table);
    }
    // Each configuration runs once a table: the control is often one of
    // the variants too.
    // Keyed by the axes' values: two names may spell one configuration.
    std::map<std::map<std::string, std::string>, harness::CellResult> cells;
    const auto cell_of = [&](const EngineConfiguration& config) -> const harness::CellResult& {
      auto it = cells.find(config.values);
      if (it == cells.end()) {
        it = cells.emplace(config.values, Run(config, checkpoint, scenario_file)).first;
      }
      return it->second;
    };
    for (const CardVariant& v : variants) {
      harness::CardRow row;
      if (!table.baseline_problem.empty()) {
        row = NotRunRow(baseline);
        row.config = v.config.name;
      } else {
        const KnownDifference* known = FindKnownDifference(
            profile_, profile_.card_baseline, v.config, checkpoint, ScenarioName(scenario_file));
        row = harness::JudgeCardRow(baseline, cell_of(v.config),
                                    known != nullptr ? known->reason : "", "");
      }
      row.axis = v.axis;
      row.value = v.value;
      table.rows.push_back(std::move(row));
    }
    if (profile_.card_control) {
      const EngineConfiguration& control = *profile_.card_control;
      harness::CardRow row;
      if (!table.baseline_problem.empty()) {
        row = NotRunRow(baseline);
        row.config = control.name;
      } else {
        // Judged as a declared difference: KNOWN when it differs, FIXED
        // (which fails the card) when it does not.
        row = harness::JudgeCardRow(baseline, cell_of(control),
                                    "negative control: " + profile_.card_control_reason, "");
      }
      row.axis = harness::kCardControlAxis;
      row.value = control.name;
      row.control = true;
      table.rows.push_back(std::move(row));
    }
    return table;
  }

  // The prompt fed whole, as a prefill and one extend, token by token: the
  // same tokens at the same positions, row for row (files: those three
  // scenarios, in that order).
  harness::CardTable FeedTable(const std::string& checkpoint,
                               const std::vector<std::string>& files) {
    harness::CardTable table;
    table.checkpoint = checkpoint;
    table.feed = true;
    table.scenario = "feed: " + ScenarioName(files[0]) + " (whole) vs " + ScenarioName(files[1]) +
                     " (" + kFeedExtend + "), " + ScenarioName(files[2]) + " (" + kFeedToken + ")";
    table.baseline = profile_.card_baseline.name;
    const harness::CellResult whole = Run(profile_.card_baseline, checkpoint, files[0]);
    if (whole.code != harness::ResultCode::kPass) {
      table.baseline_problem = "the baseline " + profile_.card_baseline.name + " is " +
                               harness::ResultCodeName(whole.code) + " on " +
                               ScenarioName(files[0]) + ": " + whole.message;
    }
    for (size_t i = 1; i < 3; ++i) {
      const char* value = i == 1 ? kFeedExtend : kFeedToken;
      harness::CardRow row;
      if (!table.baseline_problem.empty()) {
        row = NotRunRow(whole);
      } else {
        harness::CellResult cell = Run(profile_.card_baseline, checkpoint, files[i]);
        // A row's kind says how it was fed (a prefill row there is an
        // extend row here), which is what differs by design: the rows are
        // judged on their positions, fed tokens, choices and hashes.
        for (size_t k = 0; k < std::min(cell.steps.size(), whole.steps.size()); ++k) {
          cell.steps[k].kind = whole.steps[k].kind;
        }
        row = harness::JudgeCardRow(whole, cell, FeedKnownReason(profile_, value, checkpoint), "");
      }
      row.axis = kFeedTableAxis;
      row.value = value;
      row.config = profile_.card_baseline.name + " on " + ScenarioName(files[i]);
      table.rows.push_back(std::move(row));
    }
    return table;
  }

 private:
  harness::CellResult Run(const EngineConfiguration& config, const std::string& checkpoint,
                          const std::string& scenario_file) {
    ProfileCellOptions o;
    o.program = options_.program;
    o.timeout_seconds = options_.timeout_seconds;
    o.passthrough = options_.passthrough;
    if (!options_.dump_dir.empty() && !profile_.dump_logits.empty()) {
      o.dump_file = options_.dump_dir + "/card-" + std::to_string(dumps_++) + ".f32";
    }
    harness::MachineInfo platform;
    harness::CellResult cell =
        RunProfileCell(profile_, config, checkpoint, scenario_file, o, &platform);
    if (!machine_ && !platform.arch.empty()) machine_ = platform;
    if (!build_ && cell.build) build_ = cell.build;
    if (cell.readback) readback_ = protocol::NarrowerReadback(readback_, *cell.readback);
    if (cell.device) {
      std::vector<std::string>& configs = devices_[harness::DescribeDevice(*cell.device)];
      if (std::find(configs.begin(), configs.end(), config.name) == configs.end())
        configs.push_back(config.name);
    }
    return cell;
  }

 public:
  // The machine the children described, if any said hello.
  const std::optional<harness::MachineInfo>& machine() const { return machine_; }
  // The engine's build, as the first child that described it says.
  const std::optional<harness::BuildInfo>& build() const { return build_; }
  const std::optional<protocol::Readback>& readback() const { return readback_; }
  // One line per device the cells ran on, with the configurations that did.
  std::vector<std::string> DeviceLines() const {
    std::vector<std::string> lines;
    for (const auto& [device, configs] : devices_) {
      std::string line = device + ":";
      for (size_t i = 0; i < configs.size(); ++i) line += (i == 0 ? " " : ", ") + configs[i];
      lines.push_back(line);
    }
    return lines;
  }

 private:
  const EngineProfile& profile_;
  const CardOptions& options_;
  int dumps_ = 0;
  std::optional<harness::MachineInfo> machine_;
  std::optional<harness::BuildInfo> build_;
  std::optional<protocol::Readback> readback_;
  std::map<std::string, std::vector<std::string>> devices_;
};

}  // namespace

harness::Card RunCard(const EngineProfile& profile, const CardOptions& options) {
  harness::Card card;
  card.engine = profile.name;
  card.profile_file = profile.file;
  card.baseline = profile.card_baseline.name;
  if (profile.card_control) card.control = profile.card_control->name;
  const std::vector<CardVariant> variants = CardVariants(profile, &card.notes);
  CardRunner runner(profile, options);
  for (const std::string& checkpoint : options.checkpoints) {
    for (const std::string& scenario_file : options.scenario_files) {
      card.tables.push_back(runner.AxisTable(variants, checkpoint, scenario_file));
    }
    if (options.feed_scenario_files.size() == 3) {
      card.tables.push_back(runner.FeedTable(checkpoint, options.feed_scenario_files));
    }
  }
  card.machine = runner.machine();
  card.build = runner.build();
  card.readback = runner.readback();
  card.devices = runner.DeviceLines();
  return card;
}

}  // namespace samebits::runner
