// Key files with their warning (key_file.h).
#include "harness/cli/key_file.h"

#include <cstdio>

namespace samebits::cli {

std::optional<exchange::BundleKey> ReadKeyFile(const std::string& path) {
  if (path.empty()) return std::nullopt;
  exchange::BundleKey key = exchange::ReadBundleKey(path);
  if (!key.warning.empty()) std::fprintf(stderr, "samebits: warning: %s\n", key.warning.c_str());
  return key;
}

}  // namespace samebits::cli
