// Suites (suite.h).
#include "harness/runner/suite.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/analysis/bounded_json.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

// The prefixes whose remainder is a path (engine/formats/checkpoint.h).
constexpr const char* kFilePrefixes[] = {"gguf:", "llama2c:", "safetensors:"};

}  // namespace

Suite LoadSuite(const std::string& path) {
  nlohmann::json j;
  try {
    j = harness::ReadJsonFile(path, "suite", harness::kMaxSuiteBytes);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string("--suite: ") + e.what());
  }
  auto bad = [&](const std::string& what) {
    return std::invalid_argument("--suite: " + path + ": " + what);
  };
  if (!j.is_object() || !j.contains("pairs") || !j["pairs"].is_array()) {
    throw bad("expected an object with a \"pairs\" array");
  }
  Suite suite;
  suite.file = path;
  const fs::path dir = fs::path(path).parent_path();
  std::set<std::string> seen;
  for (size_t i = 0; i < j["pairs"].size(); ++i) {
    const nlohmann::json& p = j["pairs"][i];
    const std::string where = "pairs[" + std::to_string(i) + "]";
    if (!p.is_object() || !p.contains("checkpoint") || !p["checkpoint"].is_string() ||
        p["checkpoint"].get<std::string>().empty()) {
      throw bad(where + " needs a \"checkpoint\" string");
    }
    if (!p.contains("scenarios") || !p["scenarios"].is_array() || p["scenarios"].empty()) {
      throw bad(where + " needs a non-empty \"scenarios\" array of names");
    }
    SuitePair pair;
    pair.checkpoint = p["checkpoint"].get<std::string>();
    if (!seen.insert(pair.checkpoint).second) {
      throw bad(where + " lists " + pair.checkpoint + " again; list each checkpoint once");
    }
    for (const nlohmann::json& s : p["scenarios"]) {
      if (!s.is_string() || s.get<std::string>().empty()) {
        throw bad(where + " has a scenario that is not a name");
      }
      const fs::path file = dir / (s.get<std::string>() + ".json");
      std::error_code ec;
      if (!fs::is_regular_file(file, ec)) {
        throw bad(where + " names the scenario " + s.get<std::string>() + ", but there is no " +
                  file.string());
      }
      pair.scenario_files.push_back(file.string());
    }
    suite.pairs.push_back(std::move(pair));
  }
  if (suite.pairs.empty()) throw bad("the suite has no pairs");
  return suite;
}

bool NamesFile(const std::string& spec) {
  for (const char* p : kFilePrefixes) {
    if (spec.starts_with(p)) return true;
  }
  // "synthetic:tiny", "fake:ok": a scheme (letters, digits, '_' or '-')
  // before the first ':' and no '/' before it.
  const size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0) return true;
  return !std::all_of(spec.begin(), spec.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

ResolvedCheckpoint ResolveCheckpoint(const std::string& spec, const std::string& base_dir,
                                     const std::string& root) {
  ResolvedCheckpoint out;
  out.key = spec;
  out.engine_spec = spec;
  if (!NamesFile(spec)) return out;
  std::string prefix;
  for (const char* p : kFilePrefixes) {
    if (spec.starts_with(p)) prefix = p;
  }
  std::error_code ec;
  const fs::path file(spec.substr(prefix.size()));
  const fs::path resolved =
      (file.is_absolute() ? file : fs::absolute(base_dir, ec) / file).lexically_normal();
  out.file = resolved.string();
  out.engine_spec = prefix + out.file;
  out.exists = fs::exists(resolved, ec);
  // One file, one key: relative to the root when the file lies in it or
  // beside it (../shared), so the key does not depend on where the clone is.
  const fs::path relative = resolved.lexically_relative(fs::absolute(root, ec).lexically_normal());
  auto part = relative.begin();
  const bool far = relative.empty() || (*part == ".." && ++part != relative.end() && *part == "..");
  out.key = prefix + (far ? resolved : relative).string();
  return out;
}

ResolvedCheckpoint ResolveSuiteCheckpoint(const Suite& suite, const SuitePair& pair,
                                          const std::string& root) {
  std::error_code ec;
  const fs::path dir = fs::absolute(fs::path(suite.file), ec).parent_path();
  return ResolveCheckpoint(pair.checkpoint, dir.string(), root);
}

std::vector<Cell> ExpandSuite(const Suite& suite, const MatrixOptions& options,
                              const std::vector<std::string>& checkpoints,
                              const std::vector<std::string>& scenarios, const std::string& root) {
  std::vector<ResolvedCheckpoint> resolved;
  for (const SuitePair& p : suite.pairs) resolved.push_back(ResolveSuiteCheckpoint(suite, p, root));
  auto known = [&](bool want_checkpoints) {
    std::set<std::string> names;
    for (size_t i = 0; i < suite.pairs.size(); ++i) {
      const SuitePair& p = suite.pairs[i];
      if (want_checkpoints) names.insert(resolved[i].key);
      for (const std::string& f : p.scenario_files) {
        if (!want_checkpoints) names.insert(ScenarioName(f));
      }
    }
    std::string text;
    for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
  };
  std::set<std::string> wanted_scenarios;
  for (const std::string& s : scenarios) wanted_scenarios.insert(ScenarioName(s));
  for (const std::string& c : checkpoints) {
    if (std::none_of(resolved.begin(), resolved.end(),
                     [&](const ResolvedCheckpoint& r) { return r.key == c; })) {
      throw std::invalid_argument("--checkpoint: the suite " + suite.file + " has no checkpoint " +
                                  c + " (it has: " + known(true) + ")");
    }
  }
  std::set<std::string> all_scenarios;
  for (const SuitePair& p : suite.pairs) {
    for (const std::string& f : p.scenario_files) all_scenarios.insert(ScenarioName(f));
  }
  for (const std::string& s : wanted_scenarios) {
    if (all_scenarios.count(s) == 0) {
      throw std::invalid_argument("--scenario: the suite " + suite.file + " has no scenario " + s +
                                  " (it has: " + known(false) + ")");
    }
  }
  std::vector<Cell> cells;
  for (size_t i = 0; i < suite.pairs.size(); ++i) {
    const SuitePair& pair = suite.pairs[i];
    const ResolvedCheckpoint& checkpoint = resolved[i];
    if (!checkpoints.empty() &&
        std::find(checkpoints.begin(), checkpoints.end(), checkpoint.key) == checkpoints.end()) {
      continue;
    }
    MatrixOptions one = options;
    one.checkpoints = {checkpoint.key};
    one.scenario_files.clear();
    for (const std::string& f : pair.scenario_files) {
      if (wanted_scenarios.empty() || wanted_scenarios.count(ScenarioName(f)) != 0) {
        one.scenario_files.push_back(f);
      }
    }
    if (one.scenario_files.empty()) continue;
    for (Cell& cell : ExpandMatrix(one)) {
      cell.engine_checkpoint = checkpoint.engine_spec;
      if (!checkpoint.exists && cell.supported) {
        cell.supported = false;
        cell.unsupported_reason = "the checkpoint file is missing: " + checkpoint.file +
                                  " (the suite's " + pair.checkpoint +
                                  ", looked for relative to the suite file " + suite.file + ")";
      }
      cells.push_back(std::move(cell));
    }
  }
  if (cells.empty())
    throw std::invalid_argument("the selection leaves nothing of the suite to run");
  return cells;
}

}  // namespace samebits::runner
