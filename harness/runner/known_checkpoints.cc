// Refusing a checkpoint that cannot run before any cell runs
// (known_checkpoints.h).
#include "harness/runner/known_checkpoints.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include "harness/runner/run_error.h"
#include "harness/runner/suite.h"
#include "harness/runner/unavailable.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSynthetic = "synthetic:";

bool Lists(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Returns whether `rest` (after "synthetic:") is NAME or NAME-TYPE of what
// the engine knows; NAME-TYPE is split at the last '-', as samebits-engine
// splits it.
bool KnowsSynthetic(const protocol::SyntheticCheckpoints& known, const std::string& rest) {
  if (Lists(known.names, rest)) return true;
  const size_t dash = rest.rfind('-');
  return dash != std::string::npos && Lists(known.names, rest.substr(0, dash)) &&
         Lists(known.types, rest.substr(dash + 1));
}

std::string KnownList(const protocol::SyntheticCheckpoints& known) {
  std::string names, types;
  for (const std::string& n : known.names) {
    names += (names.empty() ? "" : ", ") + std::string(kSynthetic) + n;
  }
  for (const std::string& t : known.types) types += (types.empty() ? "" : "|") + t;
  if (names.empty()) return "it knows no synthetic checkpoint";
  return "it knows " + names +
         (types.empty() ? "" : " (each also as NAME-TYPE, TYPE one of " + types + ")");
}

}  // namespace

std::string CheckpointProblem(const std::string& spec, const protocol::Capabilities* capabilities) {
  if (NamesFile(spec)) {
    std::error_code ec;
    const ResolvedCheckpoint r = ResolveCheckpoint(spec, fs::current_path(ec).string(), "/");
    if (spec.empty() || spec.back() == ':') return "checkpoint '" + spec + "': names no file";
    if (!fs::exists(r.file, ec)) {
      return "checkpoint '" + spec + "': no such file or folder " + r.file;
    }
    if (::access(r.file.c_str(), R_OK) != 0) {
      return "checkpoint '" + spec + "': cannot read " + r.file;
    }
    return "";
  }
  if (!spec.starts_with(kSynthetic) || capabilities == nullptr || !capabilities->synthetic) {
    return "";
  }
  if (KnowsSynthetic(*capabilities->synthetic, spec.substr(kSynthetic.size()))) return "";
  return "checkpoint '" + spec + "': the engine knows no such synthetic checkpoint; " +
         KnownList(*capabilities->synthetic);
}

void RefuseUnknownCheckpoints(const std::vector<std::string>& specs,
                              const std::vector<EngineToAsk>& engines) {
  if (specs.empty()) return;
  // The answers of the engines that gave one (those that did not know
  // nothing against a name).
  std::vector<std::pair<std::string, protocol::Capabilities>> answers;  // program, its answer
  for (const EngineToAsk& engine : engines) {
    if (engine.probe.empty()) continue;
    std::string why;
    if (std::optional<protocol::Capabilities> c = ProbeEngine(engine.program, engine.probe, &why)) {
      answers.emplace_back(engine.program, std::move(*c));
    }
  }
  std::string problems;
  for (const std::string& spec : specs) {
    std::string problem = CheckpointProblem(spec, nullptr);
    for (size_t i = 0; problem.empty() && i < answers.size(); ++i) {
      problem = CheckpointProblem(spec, &answers[i].second);
      if (!problem.empty() && answers.size() > 1) problem += " (engine " + answers[i].first + ")";
    }
    if (!problem.empty()) problems += (problems.empty() ? "" : "\n") + problem;
  }
  if (!problems.empty()) throw RunError(problems + "\nnothing was run");
}

}  // namespace samebits::runner
