// The data folder beside the clone: ../shared, outside the repository,
// holds the real checkpoints (checkpoints/) and llama.cpp's vocabularies
// (vocab/) that some tests read. A clone without it must still pass its
// tests, so a test that needs one of its files skips when the file is
// absent, with a message that starts with kAbsentMarker. CI has the folder:
// ci/test.sh looks for the marker in ctest's log and fails when
// ../shared/checkpoints exists, so that no test passes there by skipping.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace samebits::data_folder {

// What every skip for a missing data file starts with (ci/test.sh greps it).
inline constexpr const char* kAbsentMarker = "data folder absent:";

// Returns the path of `relative` in the data folder
// ("checkpoints/stories260K.gguf" -> SOURCE/../shared/checkpoints/...),
// lexically normal (a symlinked data folder keeps its own name).
inline std::string Path(const std::string& relative) {
  return (std::filesystem::path(SAMEBITS_SOURCE_DIR) / ".." / "shared" / relative)
      .lexically_normal()
      .string();
}

// Returns "" when `path` exists, else why a test that needs it skips,
// starting with kAbsentMarker.
inline std::string Missing(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return "";
  return std::string(kAbsentMarker) + " " + path +
         " is missing (the data folder ../shared beside the clone holds the real checkpoints "
         "and vocabularies; tests/support/data_folder.h)";
}

}  // namespace samebits::data_folder

// Skips the calling test (GTEST_SKIP, so it returns from the function it is
// in) when the file or folder `path` is absent, saying which, with the
// marker CI looks for.
#define SAMEBITS_SKIP_WITHOUT_DATA(path)                                                \
  if (const std::string samebits_missing_data = ::samebits::data_folder::Missing(path); \
      !samebits_missing_data.empty())                                                   \
  GTEST_SKIP() << samebits_missing_data
