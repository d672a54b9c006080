// What a profile makes of a configuration: the program and its argv
// (ResolveProgram, BuildArguments), what its hello must echo
// (HelloMismatch) and the known differences that cover a cell
// (FindKnownDifference) (engine_profile.h).
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "harness/runner/engine_profile.h"
#include "harness/runner/profile_values.h"

namespace samebits::runner {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string ResolveProgram(const EngineProfile& profile) {
  const std::string& program = profile.command[0];
  std::error_code ec;
  if (program.find('/') != std::string::npos) {
    fs::path path = program;
    if (path.is_relative()) path = fs::path(profile.folder) / path;
    path = path.lexically_normal();
    if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0) {
      throw ProfileError(
          profile.file, "command[0]",
          "expected an executable program; " + path.string() +
              " is none (relative paths are relative to the profile's folder)" +
              (profile.build.empty() ? "" : "; build it with its 'build' command (--build)"));
    }
    return path.string();
  }
  const char* env = std::getenv("PATH");
  std::stringstream dirs(env != nullptr ? env : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path path = fs::path(dir.empty() ? "." : dir) / program;
    if (fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0) return path.string();
  }
  throw ProfileError(profile.file, "command[0]",
                     "expected a program on PATH; no '" + program + "' was found there");
}

namespace {

// Returns the argv the axes of `config` add, in the profile's argv order.
std::vector<std::string> AxisArguments(const EngineProfile& profile,
                                       const EngineConfiguration& config) {
  std::vector<std::string> args;
  for (const std::string& name : profile.argv_order) {
    const EngineAxis& axis = *profile.Axis(name);
    const std::string& value = config.values.at(axis.name);
    if (!axis.argv_at_default && axis.default_value && value == *axis.default_value) continue;
    std::map<std::string, std::string> with_value = config.values;
    with_value["value"] = value;
    for (const std::string& a : axis.argv) args.push_back(Substitute(a, with_value));
  }
  return args;
}

// Returns the argv of the profile's `dump_logits` for `dump_file`; none
// when it is "".
std::vector<std::string> DumpArguments(const EngineProfile& profile, const std::string& dump_file) {
  std::vector<std::string> args;
  if (dump_file.empty()) return args;
  for (const std::string& a : profile.dump_logits) {
    args.push_back(Substitute(a, {{"file", dump_file}}));
  }
  return args;
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

std::vector<std::string> BuildConfigurationArguments(const EngineProfile& profile,
                                                     const EngineConfiguration& config,
                                                     bool trace) {
  std::vector<std::string> args(profile.command.begin() + 1, profile.command.end());
  Append(args, AxisArguments(profile, config));
  if (trace) Append(args, profile.trace);
  return args;
}

std::vector<std::string> BuildCellArguments(const EngineProfile& profile,
                                            const EngineConfiguration& config,
                                            const std::string& checkpoint,
                                            const std::string& scenario_file,
                                            const std::string& dump_file) {
  std::map<std::string, std::string> values = config.values;
  values["checkpoint"] = checkpoint;
  values["scenario"] = scenario_file;
  std::vector<std::string> args;
  for (const std::string& a : profile.arguments) args.push_back(Substitute(a, values));
  Append(args, DumpArguments(profile, dump_file));
  return args;
}

std::vector<std::string> BuildArguments(const EngineProfile& profile,
                                        const EngineConfiguration& config,
                                        const std::string& checkpoint,
                                        const std::string& scenario_file, bool trace,
                                        const std::string& dump_file) {
  // The command's own arguments, the cell's checkpoint and scenario, the
  // configuration, then the dump: the order every child has been given.
  std::vector<std::string> args(profile.command.begin() + 1, profile.command.end());
  Append(args, BuildCellArguments(profile, config, checkpoint, scenario_file, ""));
  Append(args, AxisArguments(profile, config));
  if (trace) Append(args, profile.trace);
  Append(args, DumpArguments(profile, dump_file));
  return args;
}
namespace {

// Returns the hello's value at the dotted `key` as text, or nothing.
std::optional<std::string> HelloValue(const Json& hello, const std::string& key) {
  const Json* at = &hello;
  std::stringstream in(key);
  for (std::string part; std::getline(in, part, '.');) {
    if (!at->is_object()) return std::nullopt;
    const auto it = at->find(part);
    if (it == at->end()) return std::nullopt;
    at = &*it;
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_number_integer()) return std::to_string(at->get<int64_t>());
  if (at->is_boolean()) return at->get<bool>() ? "true" : "false";
  return at->dump();
}

}  // namespace

std::string HelloMismatch(const EngineProfile& profile, const EngineConfiguration& config,
                          const Json& hello) {
  std::string why;
  for (const HelloEcho& e : profile.hello) {
    const bool skipped =
        !e.unless.empty() && std::all_of(e.unless.begin(), e.unless.end(), [&](const auto& u) {
          return config.values.at(u.first) == u.second;
        });
    if (skipped) continue;
    const std::string expected = Substitute(e.value, config.values);
    const std::optional<std::string> got = HelloValue(hello, e.key);
    if (got && *got == expected) continue;
    why += (why.empty() ? "" : "; ") + e.key + " is " + (got ? *got : "missing") + ", expected " +
           expected;
  }
  return why;
}

bool MatchesAnyPattern(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
    return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
  });
}

const KnownDifference* FindKnownDifference(const EngineProfile& profile,
                                           const EngineConfiguration& baseline,
                                           const EngineConfiguration& config,
                                           const std::string& checkpoint,
                                           const std::string& scenario) {
  for (const KnownDifference& k : profile.known_differences) {
    // The card's feed table is no axis of a configuration.
    if (config.values.count(k.axis) == 0) continue;
    const std::string& value = config.values.at(k.axis);
    const auto base = baseline.values.find(k.axis);
    if (base != baseline.values.end() && base->second == value) continue;
    const bool value_matches =
        k.values.empty() || std::find(k.values.begin(), k.values.end(), value) != k.values.end();
    if (!value_matches) continue;
    if (!k.checkpoints.empty() && !MatchesAnyPattern(k.checkpoints, checkpoint)) continue;
    if (!k.scenarios.empty() && !MatchesAnyPattern(k.scenarios, scenario)) continue;
    return &k;
  }
  return nullptr;
}

}  // namespace samebits::runner
