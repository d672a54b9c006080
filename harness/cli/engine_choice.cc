// Reading --engine and --engine-profile (engine_choice.h).
#include "harness/cli/engine_choice.h"

#include <filesystem>

#include "harness/cli/commands.h"

namespace samebits::cli {

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
  try {
    return std::make_shared<const runner::EngineProfile>(runner::LoadEngineProfile(path));
  } catch (const runner::ProfileError& e) {
    throw UsageError(std::string("engine profile refused: ") + e.what());
  }
}

bool IsOwnEngine(const runner::EngineProfile& profile) {
  return profile.name == "samebits";
}

}  // namespace samebits::cli
