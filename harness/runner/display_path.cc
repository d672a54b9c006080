// Paths as messages show them (display_path.h).
#include "harness/runner/display_path.h"

#include <filesystem>

namespace samebits::runner {

std::string DisplayPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path relative = fs::path(path).lexically_relative(fs::current_path(ec));
  if (ec || relative.empty() || *relative.begin() == "..") return path;
  return relative.string();
}

}  // namespace samebits::runner
