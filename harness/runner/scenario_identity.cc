// Scenario content hashes (scenario_identity.h).
#include "harness/runner/scenario_identity.h"

#include <xxhash.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "harness/analysis/bounded_json.h"
#include "harness/runner/run_error.h"

namespace samebits::runner {

std::string ScenarioContentHash(const std::string& path) {
  constexpr uintmax_t kMaxBytes = uintmax_t{16} << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "";
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxBytes) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return "";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())));
  return hex;
}

void RefuseUnreadableScenario(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::is_directory(path, ec)) return;
  try {
    harness::ReadJsonFile(path, "scenario", harness::kMaxScenarioBytes);
  } catch (const std::runtime_error& e) {
    throw RunError(std::string(e.what()) + "; nothing was run");
  }
}

void IdentifyScenarios(std::vector<Cell>& cells) {
  struct Seen {
    std::string file, hash;
  };
  std::map<std::string, std::string> hash_of_file;
  std::map<std::string, Seen> by_name;
  for (Cell& cell : cells) {
    auto [it, fresh] = hash_of_file.try_emplace(cell.scenario_file);
    if (fresh) {
      RefuseUnreadableScenario(cell.scenario_file);
      it->second = ScenarioContentHash(cell.scenario_file);
    }
    cell.scenario_xxh3 = it->second;
    const auto [named, first] =
        by_name.try_emplace(cell.scenario, Seen{cell.scenario_file, it->second});
    if (!first && named->second.hash != cell.scenario_xxh3) {
      throw RunError("two different scenarios are named '" + cell.scenario +
                     "': " + named->second.file + " and " + cell.scenario_file +
                     " (results are stored and referenced by the name; rename one)");
    }
  }
}

}  // namespace samebits::runner
