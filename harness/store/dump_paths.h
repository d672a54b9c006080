// Where a run's raw logit dumps are kept and how their paths are stored:
// shared by the runner (which writes a child's dumps) and by import (which
// writes a bundle's), so that both name and record a cell's dump alike.
#pragma once

#include <string>

namespace samebits::store {

// Returns the file name of a cell's raw logit dump: "<checkpoint>.<scenario>.
// <configuration>.f32" with every character other than letters, digits,
// '-' and '_' made '_' (a checkpoint may be a path), shortened to at most
// 120 characters. When anything was replaced or cut, an FNV-1a hash of the
// original names is added before ".f32", so two cells of one run never share
// a file.
std::string DumpFileName(const std::string& checkpoint, const std::string& scenario,
                         const std::string& config);

// Returns how a dump path is stored with its cell: relative to `root` when
// it lies below it (the project moves with its dumps), else absolute.
// Reports resolve relative paths against the root.
std::string StoredDumpPath(const std::string& path, const std::string& root);

}  // namespace samebits::store
