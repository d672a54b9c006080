// Which file `--scenario NAME|FILE` means (scenario_file.h).
#include "harness/cli/scenario_file.h"

#include <filesystem>

#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"

namespace samebits::cli {

std::string ScenarioFile(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(name, ec)) return fs::absolute(name).string();
  const std::string path = GetPaths().scenarios + "/" + name + ".json";
  if (!fs::is_regular_file(path, ec))
    throw UsageError("--scenario " + name + ": neither a file nor " + path);
  return path;
}

}  // namespace samebits::cli
