// Writing a report file safely: never over the run store (or its journal
// files), and never leaving half a report where a whole one was.
#pragma once

#include <string>

namespace samebits::harness::report {

// Throws std::invalid_argument when `output` names the store at `store_path`
// or one of its SQLite side files (-wal, -shm, -journal), through any chain
// of symlinks, relative parts or hard links. Call it before any work, so a
// typo costs nothing.
void RefuseOutputOverStore(const std::string& output, const std::string& store_path);

// Writes `text` to `path` through a temporary file in the same folder and a
// rename, creating the folder when missing: a reader (a CI system
// collecting artifacts) never sees half a report, and a failed write leaves
// the previous report whole. Throws std::runtime_error naming the file.
void WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace samebits::harness::report
