#include "harness/store/dump_paths.h"

#include <filesystem>

#include "engine/numerics/hash.h"

namespace samebits::store {

namespace fs = std::filesystem;

std::string DumpFileName(const std::string& checkpoint, const std::string& scenario,
                         const std::string& config) {
  const std::string raw = checkpoint + "." + scenario + "." + config;
  std::string safe;
  bool changed = false;
  for (const char ch : raw) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    safe += keep ? ch : '_';
    changed = changed || !keep;
  }
  // The tail names the configuration, which tells cells of one group apart.
  constexpr size_t kMaxStem = 120;
  if (safe.size() > kMaxStem) {
    safe = safe.substr(safe.size() - kMaxStem);
    changed = true;
  }
  // A leading '.' would hide the file; ".." must never be a name.
  if (!safe.empty() && safe.front() == '.') {
    safe.front() = '_';
    changed = true;
  }
  if (changed) {
    // FNV-1a 64 over the original names keeps changed names apart.
    safe += "-";
    safe += numerics::Hex16(numerics::Fnv1a64(raw.data(), raw.size()));
  }
  return safe + ".f32";
}

std::string StoredDumpPath(const std::string& path, const std::string& root) {
  if (path.empty()) return path;
  const fs::path absolute = fs::absolute(path).lexically_normal();
  const fs::path relative = absolute.lexically_relative(fs::absolute(root).lexically_normal());
  if (relative.empty() || *relative.begin() == "..") return absolute.string();
  return relative.string();
}

}  // namespace samebits::store
