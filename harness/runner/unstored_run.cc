// Removing an unstored run's files (unstored_run.h).
#include "harness/runner/unstored_run.h"

#include <filesystem>
#include <set>

namespace samebits::runner {

namespace fs = std::filesystem;

void RemoveRunDumps(const harness::RunResult& run, const std::string& root) {
  std::set<fs::path> folders;
  std::error_code ec;
  for (const harness::CellResult& cell : run.cells) {
    if (cell.dump_path.empty()) continue;
    fs::path file(cell.dump_path);
    if (file.is_relative() && !root.empty()) file = fs::path(root) / file;
    fs::remove(file, ec);
    folders.insert(file.parent_path());
  }
  for (const fs::path& folder : folders) fs::remove(folder, ec);  // only when empty
}

UnstoredRunFiles::~UnstoredRunFiles() {
  if (!stored_) RemoveRunDumps(run_, root_);
}

}  // namespace samebits::runner
