// Reading --engine and --engine-profile (engine_choice.h).
#include "harness/cli/engine_choice.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "harness/cli/commands.h"
#include "harness/runner/profile_build.h"

namespace samebits::cli {
namespace {

// Returns the profile at `path`. Throws UsageError naming what is wrong.
std::shared_ptr<const runner::EngineProfile> LoadProfile(const std::string& path) {
  try {
    return std::make_shared<const runner::EngineProfile>(runner::LoadEngineProfile(path));
  } catch (const runner::ProfileError& e) {
    throw UsageError(std::string("engine profile refused: ") + e.what());
  }
}

}  // namespace

std::shared_ptr<const runner::EngineProfile> ChosenProfile(const std::string& engine,
                                                           const std::string& engine_profile) {
  if (!engine.empty() && !engine_profile.empty()) {
    throw UsageError("give one of --engine and --engine-profile, not both");
  }
  std::string path = engine_profile;
  if (path.empty()) {
    std::error_code ec;
    if (engine.empty() || engine.find('/') != std::string::npos ||
        std::filesystem::is_regular_file(engine, ec)) {
      return nullptr;  // samebits-engine, or a program under its profile
    }
    const std::string engines = GetPaths().root + "/engines";
    path = runner::FindEngineProfile(engines, engine);
    if (path.empty()) {
      throw UsageError("--engine " + engine + ": neither a program nor a profile " + engines + "/" +
                       engine + ".json (give a path to a program, a profile's name there, " +
                       "or --engine-profile FILE)");
    }
  }
  return LoadProfile(path);
}

bool IsOwnEngine(const runner::EngineProfile& profile) {
  return profile.name == runner::kOwnEngineName;
}

std::shared_ptr<const runner::EngineProfile> OwnEngineProfile() {
  const std::string engines = GetPaths().root + "/engines";
  const std::string path = runner::FindEngineProfile(engines, runner::kOwnEngineName);
  if (path.empty()) {
    throw UsageError("no samebits-engine profile at " + engines + "/" + runner::kOwnEngineName +
                     ".json" +
                     ": the default matrix (checkpoints and configurations) is read from it. "
                     "Run the samebits of a source tree (build/bin/samebits finds the tree from "
                     "its own place), or from the tree's root, or give --engine-profile FILE");
  }
  return LoadProfile(path);
}

void AddBuildFlag(CLI::App* sub, bool* build) {
  sub->add_flag("--build", *build,
                "Runs the engine profile's `build` command (an argv list, in the profile's "
                "folder, never through a shell) before any child starts; a failed build is "
                "exit 2 with the tail of its output.");
}

void BuildIfAsked(bool build, const runner::EngineProfile* profile) {
  // Several parts of one command may ask for the same engine (gate reads
  // its flags twice; conform may run one engine on both sides): one build.
  static std::set<std::string> built;
  if (!build || (profile != nullptr && built.count(profile->file) != 0)) return;
  if (profile == nullptr) {
    throw UsageError(
        "--build needs an engine profile (--engine NAME or --engine-profile FILE): "
        "a program given by path has no build command");
  }
  std::fprintf(stderr, "samebits: building engine %s (%s)\n", profile->name.c_str(),
               profile->file.c_str());
  try {
    const double seconds = runner::BuildEngine(*profile);
    std::fprintf(stderr, "samebits: built engine %s in %.1f s\n", profile->name.c_str(), seconds);
    built.insert(profile->file);
  } catch (const runner::ProfileError& e) {
    throw UsageError(std::string("--build: ") + e.what());
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--build: ") + e.what());
  }
}

}  // namespace samebits::cli
