// Paths as messages show them: shorter when they lie below the current
// directory.
#pragma once

#include <string>

namespace samebits::runner {

// Returns `path` relative to the current directory when it lies below it
// (shorter messages), else as given.
std::string DisplayPath(const std::string& path);

}  // namespace samebits::runner
