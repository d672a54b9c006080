// The verdict on a sharded gate (fleet_verdict.h).
#include "harness/analysis/fleet_verdict.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "harness/analysis/batch.h"
#include "harness/analysis/machine_name.h"
#include "harness/analysis/numeric_profile.h"

namespace samebits::harness {
namespace {

// Returns the name a group's stand-in cell is compared under: its numeric
// profile ("portable", "portable-int8", ...), after its engine's name for an
// engine described by a profile.
std::string GroupConfigName(const CellResult& c) {
  const std::string profile = ProfileName(ProfileOf(c.config));
  return c.config.engine.empty() ? profile : c.config.engine + "/" + profile;
}

// Returns how well `c` stands for its machine's outputs in its group:
// cells that ran, the reference kernels (or the profile's baseline) first,
// then unbatched ones; -1 for a cell that cannot stand (did not run, or
// differs from its baseline by declaration).
int StandInRank(const CellResult& c) {
  if (c.code != ResultCode::kPass && c.code != ResultCode::kFail) return -1;
  if (c.steps.empty()) return -1;
  return (c.config.kernels == "reference" || c.config.baseline ? 2 : 0) +
         (IsBatched(c.config) ? 0 : 1);
}

// Returns `machine`'s view for comparing machines: one cell per agreement
// group (the best StandInRank), named after the group (GroupConfigName).
RunResult MachineView(const std::vector<const RunResult*>& runs) {
  RunResult view = *runs.front();
  view.cells.clear();
  std::map<std::tuple<std::string, std::string, std::string>, size_t> at;
  std::vector<int> ranks;
  for (const RunResult* run : runs) {
    for (const CellResult& c : run->cells) {
      const int rank = StandInRank(c);
      if (rank < 0) continue;
      const auto key = std::make_tuple(c.checkpoint, c.scenario, GroupConfigName(c));
      auto it = at.find(key);
      if (it != at.end() && ranks[it->second] >= rank) continue;
      CellResult stand_in = c;
      stand_in.config.name = GroupConfigName(c);
      if (it == at.end()) {
        at.emplace(key, view.cells.size());
        view.cells.push_back(std::move(stand_in));
        ranks.push_back(rank);
      } else {
        view.cells[it->second] = std::move(stand_in);
        ranks[it->second] = rank;
      }
    }
  }
  return view;
}

}  // namespace

ShardChoice ChooseShards(const std::vector<StoredShard>& stored, int expected,
                         const std::string& group) {
  if (stored.empty())
    throw std::invalid_argument("no shard of group '" + group + "' is in the store");
  ShardChoice choice;
  choice.count = stored.front().count;
  for (const StoredShard& s : stored) {
    if (s.count != choice.count)
      throw std::invalid_argument(
          "the shards of group '" + group + "' were run with different shard counts (run " +
          std::to_string(stored.front().run_id) + " is shard " +
          std::to_string(stored.front().index) + "/" + std::to_string(choice.count) + ", run " +
          std::to_string(s.run_id) + " is shard " + std::to_string(s.index) + "/" +
          std::to_string(s.count) + "); give every shard of a group the same N");
  }
  if (expected > 0 && expected != choice.count)
    throw std::invalid_argument("--expect-shards " + std::to_string(expected) + ", but group '" +
                                group + "' was run as " + std::to_string(choice.count) +
                                " shards (its runs say K/" + std::to_string(choice.count) + ")");
  std::vector<std::vector<int64_t>> runs(static_cast<size_t>(choice.count));
  for (const StoredShard& s : stored) {
    if (s.index >= 1 && s.index <= choice.count)
      runs[static_cast<size_t>(s.index - 1)].push_back(s.run_id);
  }
  for (int k = 1; k <= choice.count; ++k) {
    const std::vector<int64_t>& ids = runs[static_cast<size_t>(k - 1)];
    if (ids.empty()) {
      choice.missing.push_back(k);
      choice.run_ids.push_back(0);
      continue;
    }
    const int64_t newest = *std::max_element(ids.begin(), ids.end());
    choice.run_ids.push_back(newest);
    if (ids.size() > 1) {
      std::string list;
      for (int64_t id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
      choice.notes.push_back("Shard " + std::to_string(k) + "/" + std::to_string(choice.count) +
                             " was stored " + std::to_string(ids.size()) + " times (runs " + list +
                             "): the newest, run " + std::to_string(newest) + ", counts.");
    }
  }
  return choice;
}

std::string MissingShardsText(const ShardChoice& choice) {
  std::string out;
  for (int k : choice.missing)
    out += (out.empty() ? "" : ", ") + std::to_string(k) + "/" + std::to_string(choice.count);
  return out;
}

RunResult UnionOfShards(const std::vector<RunResult>& shards, const std::string& command) {
  RunResult all;
  if (shards.empty()) return all;
  all.machine = shards.front().machine;
  all.machine_name = MachineNameOf(shards.front());
  all.started_at = shards.front().started_at;
  all.command = command;
  for (const RunResult& s : shards) {
    all.started_at = std::min(all.started_at, s.started_at);
    all.elapsed_ms += s.elapsed_ms;
    // Each cell keeps its shard's architecture, so its libm outputs are
    // judged against that architecture's references (CellArch).
    for (const CellResult& c : s.cells) {
      all.cells.push_back(c);
      if (s.machine.arch != all.machine.arch) all.cells.back().machine_arch = s.machine.arch;
    }
  }
  return all;
}

std::vector<MachineComparison> CompareShardMachines(const std::vector<RunResult>& shards,
                                                    const CompareOptions& options) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RunResult*>> by_machine;
  for (const RunResult& s : shards) {
    const std::string name = MachineNameOf(s);
    if (by_machine.find(name) == by_machine.end()) order.push_back(name);
    by_machine[name].push_back(&s);
  }
  std::vector<MachineComparison> out;
  if (order.size() < 2) return out;
  const RunResult first_all = MachineView(by_machine[order.front()]);
  for (size_t m = 1; m < order.size(); ++m) {
    RunResult other = MachineView(by_machine[order[m]]);
    // Only the groups both ran: the others are the shards' split, not a
    // cell either machine failed to run.
    RunResult first = first_all;
    const auto in = [](const RunResult& run, const CellResult& c) {
      return std::any_of(run.cells.begin(), run.cells.end(), [&](const CellResult& x) {
        return x.checkpoint == c.checkpoint && x.scenario == c.scenario &&
               x.config.name == c.config.name;
      });
    };
    std::erase_if(first.cells, [&](const CellResult& c) { return !in(other, c); });
    std::erase_if(other.cells, [&](const CellResult& c) { return !in(first_all, c); });
    out.push_back({order[m], CompareRuns(first, other, "machine " + order.front(),
                                         "machine " + order[m], options)});
  }
  return out;
}

}  // namespace samebits::harness
