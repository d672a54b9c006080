// A fresh temporary folder, removed with its files (temp_folder.h).
#include "harness/runner/temp_folder.h"

#include <stdlib.h>

#include <filesystem>

namespace samebits::runner {

TempFolder::TempFolder(const std::string& prefix) {
  std::error_code ec;
  std::string pattern = (std::filesystem::temp_directory_path(ec) / (prefix + "-XXXXXX")).string();
  if (!ec && ::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace samebits::runner
