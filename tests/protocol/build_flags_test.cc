// The `hello` record's build flags are those of the build type actually
// compiled (they key the store's `builds` table): a Debug or RelWithDebInfo
// engine must not report Release's "-O3 -DNDEBUG". This test is compiled
// with the same build type as the engine, so what the preprocessor sees
// here (NDEBUG, __OPTIMIZE__) is what the engine was built with.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "engine/protocol/platform.h"

namespace samebits::protocol {
namespace {

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool HasWord(const std::string& text, const std::string& word) {
  for (const std::string& w : Words(text)) {
    if (w == word) return true;
  }
  return false;
}

// Returns the last -O option in `flags` ("-O3", "-Os", ...), or "" when none.
std::string OptimizationLevel(const std::string& flags) {
  std::string level;
  for (const std::string& w : Words(flags)) {
    if (w.rfind("-O", 0) == 0) level = w;
  }
  return level;
}

TEST(BuildFlags, ReportTheBuildTypeCompiled) {
  const std::string flags = ThisBuild().flags;
  SCOPED_TRACE("build type " SAMEBITS_BUILD_TYPE ", reported flags: " + flags);
#if defined(NDEBUG)
  EXPECT_TRUE(HasWord(flags, "-DNDEBUG"));
#else
  EXPECT_FALSE(HasWord(flags, "-DNDEBUG"));
#endif
  const std::string level = OptimizationLevel(flags);
#if defined(__OPTIMIZE_SIZE__)
  EXPECT_EQ(level, "-Os");
#elif defined(__OPTIMIZE__)
  EXPECT_TRUE(!level.empty() && level != "-O0") << level;
#else
  EXPECT_TRUE(level.empty() || level == "-O0") << level;
#endif
  EXPECT_TRUE(HasWord(flags, "-ffp-contract=off"));
}

TEST(BuildFlags, ContainTheBuildTypesFlags) {
  const std::vector<std::string> reported = Words(ThisBuild().flags);
  for (const std::string& w : Words(SAMEBITS_BUILD_TYPE_FLAGS)) {
    EXPECT_TRUE(std::find(reported.begin(), reported.end(), w) != reported.end())
        << "'" << w << "' of build type " SAMEBITS_BUILD_TYPE " is not in: " << ThisBuild().flags;
  }
}

}  // namespace
}  // namespace samebits::protocol
