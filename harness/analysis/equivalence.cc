// Equivalent scenarios (equivalence.h).
#include "harness/analysis/equivalence.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <utility>

#include "engine/numerics/hash.h"
#include "harness/analysis/bounded_json.h"
#include "harness/analysis/numeric_profile.h"

namespace samebits::harness {
namespace {

// Where two scenarios' cells first differ at a shared position.
struct PositionDifference {
  int position = 0;
  std::string detail;
};

// Returns the first shared position (in `a`'s order) whose hashes differ.
std::optional<PositionDifference> FirstSharedDifference(const CellResult& a, const CellResult& b) {
  std::map<int, const StepRecord*> by_position;
  for (const StepRecord& s : b.steps) by_position.emplace(s.position, &s);
  for (const StepRecord& s : a.steps) {
    auto it = by_position.find(s.position);
    if (it == by_position.end()) continue;
    const StepRecord& t = *it->second;
    // Rows at one position are only comparable when the same token was fed
    // there; a declaration that feeds different ones is itself wrong.
    if (s.input_token != t.input_token) {
      return PositionDifference{s.position, "fed token " + std::to_string(s.input_token) + " vs " +
                                                std::to_string(t.input_token) +
                                                ": the scenarios do not feed the same tokens"};
    }
    if (s.xxh3_64 != t.xxh3_64 || s.fnv1a64 != t.fnv1a64) {
      return PositionDifference{s.position, "xxh3_64 " + numerics::Hex16(s.xxh3_64) + " (" +
                                                s.kind + ") vs " + numerics::Hex16(t.xxh3_64) +
                                                " (" + t.kind + ")"};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<ScenarioEquivalence> LoadEquivalences(const std::string& path) {
  auto bad = [&](const std::string& what) {
    return std::invalid_argument("equivalences in " + path + ": " + what);
  };
  nlohmann::json j;
  try {
    j = ReadJsonFile(path, "equivalences in", kMaxEquivalencesBytes);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  std::vector<ScenarioEquivalence> out;
  if (!j.is_object() || !j.contains("equivalences")) return out;
  const nlohmann::json& list = j["equivalences"];
  if (!list.is_array()) throw bad("\"equivalences\" must be an array");
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& e = list[i];
    const std::string where = "equivalences[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("scenarios") || !e["scenarios"].is_array() ||
        e["scenarios"].size() != 2 || !e["scenarios"][0].is_string() ||
        !e["scenarios"][1].is_string()) {
      throw bad(where + ": expected {\"scenarios\": [\"A\", \"B\"]}");
    }
    for (const auto& [key, value] : e.items()) {
      if (key == "scenarios" || key == "why") continue;
      std::string message = where;
      message += ": unknown key \"" + key + "\"";
      throw bad(message);
    }
    ScenarioEquivalence eq{e["scenarios"][0].get<std::string>(),
                           e["scenarios"][1].get<std::string>(), ""};
    if (e.contains("why")) {
      if (!e["why"].is_string()) throw bad(where + ": \"why\" must be a string");
      eq.why = e["why"].get<std::string>();
    }
    if (eq.a.empty() || eq.b.empty() || eq.a == eq.b) {
      throw bad(where + ": two different, non-empty scenario names are needed");
    }
    out.push_back(std::move(eq));
  }
  return out;
}

Diagnosis CheckEquivalences(RunResult& run, const std::vector<ScenarioEquivalence>& equivalences) {
  Diagnosis out;
  out.kind = Diagnosis::Kind::kScenariosDiffer;
  int differing = 0;
  for (const ScenarioEquivalence& eq : equivalences) {
    // Per checkpoint: the configurations that differ, and the first place.
    std::map<std::string, std::vector<std::string>> configs;
    std::map<std::string, PositionDifference> first;
    std::vector<std::string> order;
    for (const CellResult& a : run.cells) {
      if (a.scenario != eq.a || !RanAndCompared(a.code)) continue;
      for (CellResult& b : run.cells) {
        if (b.scenario != eq.b || !RanAndCompared(b.code) || b.checkpoint != a.checkpoint ||
            b.config.name != a.config.name || ProfileOf(b.config) != ProfileOf(a.config)) {
          continue;
        }
        const auto d = FirstSharedDifference(a, b);
        if (!d) continue;
        ++differing;
        const std::string text = "differs from scenario " + eq.a +
                                 " (declared equivalent) at position " +
                                 std::to_string(d->position) + ": " + d->detail;
        b.code = ResultCode::kFail;
        b.message = b.message.empty() ? text : b.message + "; " + text;
        if (configs.find(a.checkpoint) == configs.end()) {
          order.push_back(a.checkpoint);
          first[a.checkpoint] = *d;
        }
        configs[a.checkpoint].push_back(a.config.name);
        if (out.headline.empty()) {
          out.headline = "Scenarios declared equivalent give different bits: " + eq.a + " and " +
                         eq.b + " first differ at position " + std::to_string(d->position) + " (" +
                         a.checkpoint + ", " + a.config.name + ").";
        }
      }
    }
    for (const std::string& checkpoint : order) {
      const std::vector<std::string>& names = configs[checkpoint];
      std::string list;
      for (size_t i = 0; i < names.size() && i < 4; ++i) list += (i ? ", " : "") + names[i];
      if (names.size() > 4) list += " and " + std::to_string(names.size() - 4) + " more";
      std::string detail = eq.a + " and " + eq.b + " on " + checkpoint + ": ";
      detail += std::to_string(names.size()) + " configurations (" + list + ") differ, ";
      detail += "first at position " + std::to_string(first[checkpoint].position) + ": ";
      detail += first[checkpoint].detail;
      if (!eq.why.empty()) detail += " (declared equivalent: " + eq.why + ")";
      out.details.push_back(std::move(detail));
    }
  }
  if (differing > 1 && !out.headline.empty()) {
    out.headline += " " + std::to_string(differing) + " cells differ from their equivalent.";
  }
  return out;
}

}  // namespace samebits::harness
