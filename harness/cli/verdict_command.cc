// `samebits verdict --group ID`: once every shard of a sharded gate (`gate
// --shard K/N --group ID`) is in the store, judges the union of their cells
// once, with the gate's own judge and references, and compares the shards'
// machines with each other as `compare` does (harness/analysis/fleet_verdict.h).
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "harness/analysis/fleet_verdict.h"
#include "harness/analysis/judge.h"
#include "harness/analysis/machine_name.h"
#include "harness/analysis/shard.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/verdict.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/report_flags.h"
#include "harness/store/shard_records.h"

namespace samebits::cli {
namespace {

struct VerdictFlags {
  std::string group;
  int expect_shards = 0;  // 0: the N the shards recorded
  std::string db;
  std::string references_dir;
  ReportFlags reports;
};

// Returns the message for a group no run of `store` belongs to.
std::string NoSuchGroupMessage(store::Store& store, const std::string& group) {
  const std::vector<std::string> groups = store::ShardGroups(store, 10);
  std::string known;
  for (const std::string& g : groups) known += (known.empty() ? "" : ", ") + g;
  return "no shard of group '" + group + "' is in the store" +
         (groups.empty() ? std::string(" (it holds no sharded gate's runs; make them with "
                                       "`samebits gate --shard K/N --group ID`)")
                         : " (its newest groups: " + known + ")");
}

// Returns "1/2 run 5 on ci-x86, 2/2 run 6 on ci-arm": the shards of
// `choice` that are in, `shards` their runs in the same order.
std::string ShardsText(const harness::ShardChoice& choice,
                       const std::vector<harness::RunResult>& shards) {
  std::string out;
  size_t at = 0;
  for (size_t k = 0; k < choice.run_ids.size(); ++k) {
    if (choice.run_ids[k] == 0 || at >= shards.size()) continue;
    const harness::RunResult& s = shards[at++];
    out += (out.empty() ? "" : ", ") + std::to_string(k + 1) + "/" + std::to_string(choice.count) +
           " run " + std::to_string(s.run_id) + " on " + harness::MachineNameOf(s);
  }
  return out;
}

// Adds what the machine comparisons found to the union's diagnosis, so the
// terminal summary and every report say it. Returns whether a machine
// differs from the first.
bool AddMachineFindings(const std::vector<harness::MachineComparison>& machines,
                        harness::Diagnosis& diagnosis) {
  bool differs = false;
  for (const harness::MachineComparison& m : machines) {
    const harness::RunComparison& c = m.comparison;
    diagnosis.details.push_back("Machine " + m.machine + " compared with " +
                                c.label_a.substr(std::string("machine ").size()) +
                                ", group by group: " + c.headline);
    for (const harness::CellComparison& cell : c.cells) {
      if (cell.outcome != harness::CellOutcome::kDiffer) continue;
      differs = true;
      diagnosis.details.push_back("  " + harness::DescribeCellDifference(cell));
    }
  }
  return differs;
}

int Verdict(const VerdictFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.db, store::Access::kRead);
  const std::vector<harness::StoredShard> stored = store::ShardsOf(*store, flags.group);
  if (stored.empty()) throw UsageError(NoSuchGroupMessage(*store, flags.group));
  harness::ShardChoice choice;
  try {
    choice = harness::ChooseShards(stored, flags.expect_shards, flags.group);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::vector<harness::RunResult> shards;
  for (int64_t id : choice.run_ids) {
    if (id != 0) shards.push_back(store->LoadRun(id));
  }
  if (!choice.missing.empty()) {
    for (const std::string& note : choice.notes) std::printf("%s\n", note.c_str());
    throw UsageError(
        "group '" + flags.group + "': shard" + (choice.missing.size() == 1 ? " " : "s ") +
        harness::MissingShardsText(choice) + (choice.missing.size() == 1 ? " is" : " are") +
        " not in the store yet" +
        (shards.empty() ? std::string() : " (in: " + ShardsText(choice, shards) + ")") +
        "; the verdict needs every shard");
  }
  harness::RunResult all = harness::UnionOfShards(shards, CommandLine());
  MatrixFlags matrix;
  matrix.references_dir = flags.references_dir;
  matrix.db = flags.db;
  harness::Judge(all, JudgeOptionsFor(all, matrix));
  harness::CompareOptions compare;
  compare.dump_base_dir = GetPaths().root;
  const std::vector<harness::MachineComparison> machines =
      harness::CompareShardMachines(shards, compare);
  harness::Diagnosis& diagnosis = all.diagnosis;
  diagnosis.details.insert(diagnosis.details.begin(),
                           "Group " + flags.group + ": " + std::to_string(choice.count) +
                               " shards (" + ShardsText(choice, shards) + ").");
  for (size_t i = 0; i < choice.notes.size(); ++i)
    diagnosis.details.insert(diagnosis.details.begin() + static_cast<std::ptrdiff_t>(i + 1),
                             choice.notes[i]);
  const bool machines_differ = AddMachineFindings(machines, diagnosis);
  std::printf("%s", harness::FormatSummary(all, /*diagnose=*/true).c_str());
  WriteReports(flags.reports, [&](const std::string& format, const std::string& path) {
    WriteRunReportFile(all, format, path);
  });
  const int code = harness::GateExitCode(harness::RunVerdict(all));
  return code == 0 && machines_differ ? 1 : code;
}

CommandSpec SetupVerdict(CLI::App& app) {
  auto flags = std::make_shared<VerdictFlags>();
  CLI::App* sub = app.add_subcommand(
      "verdict",
      "Judges a sharded gate as one: once every shard (`samebits gate --shard K/N --group ID`) "
      "is in the store, checks the union of their cells against each other and the references "
      "with the gate's judge, and compares the shards' machines with each other as `samebits "
      "compare` does.");
  sub->add_option("--group", flags->group,
                  "The group whose shards to judge (the --group the shards' gates were given).")
      ->type_name("ID")
      ->required()
      ->check(CLI::Validator(
          [](std::string& value) -> std::string { return harness::ShardGroupProblem(value); }, ""));
  sub->add_option("--expect-shards", flags->expect_shards,
                  "The number of shards the group must have (N of the shards' K/N); default: the "
                  "N the stored shards recorded. A stored shard with another N is an error.")
      ->type_name("N")
      ->check(WholeNumberInRange(1, harness::kMaxShards));
  Declare(AddStoreOption(sub, flags->db, "Reads the shards from"), PathRole::kReadStore);
  Declare(sub->add_option("--references-dir", flags->references_dir,
                          "Reads references from this folder instead of the project's references/.")
              ->type_name("DIR")
              ->check(ExistingFolder()),
          PathRole::kInput);
  AddReportFlags(sub, flags->reports, "the verdict");
  sub->footer(
      "A shard stored more than once (a retried CI job) counts by its newest run, and the\n"
      "verdict says so. Machines are compared group by group (checkpoint x scenario x numeric\n"
      "profile, --math and --quant-dot): each shard runs other configurations of a group,\n"
      "which must all give the same bits, so a machine whose cells of a group differ from\n"
      "another machine's is named with the most likely cause (the math library, the ISA,\n"
      "the architecture, ...).\n\n"
      "Exit codes:\n"
      "  0  every shard is in, and every cell agrees with the others and the references\n"
      "  1  something differs (the summary and the reports say what, where and on which\n"
      "     machine)\n"
      "  2  the verdict could not be made: a shard is missing (each is named), no such group,\n"
      "     shards with different N, an unreachable store\n\n"
      "Examples:\n"
      "  samebits verdict --group \"$GITHUB_RUN_ID\" --expect-shards 4 \\\n"
      "      --db postgresql://ci@db.example/samebits --report-md verdict.md\n"
      "  samebits verdict --group nightly-42");
  return {sub, [flags] { return Verdict(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(verdict, 25, SetupVerdict);

}  // namespace samebits::cli
