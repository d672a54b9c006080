// What a revision's build cache remembers (harness/runner/revision_build.h):
// only what the sources decide. A build that finished, with success or a
// nonzero status of its own, is not run again; one killed by a signal (an
// interrupted bisect or bench, the OOM killer), one whose command was
// killed under the shell, or one past its timeout says nothing about the
// revision and is built again, so a later bisect never skips a revision
// that would have built.
#include "harness/runner/revision_build.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/harness/harness_test_util.h"

namespace samebits::runner {
namespace {

using harness::testing::TempDir;
using harness::testing::WriteFile;

struct Case {
  std::string name;
  std::string command;  // the build command, run by /bin/sh in the worktree
  double timeout_seconds;
  bool built;
  bool remembered;  // the second call answers from the cache
};

TEST(RevisionBuild, OnlyABuildThatFinishedIsRemembered) {
  TempDir tmp;
  const std::string repo = tmp.path() + "/repo";
  WriteFile(repo + "/engine.sh", "#!/bin/sh\necho engine\n");
  ASSERT_EQ(std::system(("cd '" + repo +
                         "' && git init -q . && git add engine.sh && git -c user.name=t -c "
                         "user.email=t@t commit -q -m one")
                            .c_str()),
            0);
  const std::vector<Case> cases = {
      {"a build that succeeds", "mkdir -p out && cp engine.sh out/engine && chmod +x out/engine",
       60, true, true},
      {"a build that fails with its own status", "echo broken >&2; exit 1", 60, false, true},
      {"a build that finishes without the engine", "true", 60, false, true},
      {"a build killed by a signal", "kill -KILL $$", 60, false, false},
      {"a build interrupted as Ctrl-C does", "kill -INT $$; sleep 5", 60, false, false},
      {"a build whose compiler was killed", "sh -c 'kill -KILL $$'", 60, false, false},
      {"a build past its timeout", "sleep 30", 0.5, false, false},
  };
  int index = 0;
  for (const Case& c : cases) {
    RevisionBuildOptions options;
    options.repo = repo;
    options.cache_dir = tmp.path() + "/cache" + std::to_string(index++);
    options.build_command = c.command;
    options.engine = "out/engine";
    options.timeout_seconds = c.timeout_seconds;
    const RevisionBuild first = BuildRevision("HEAD", options);
    EXPECT_EQ(first.built, c.built) << c.name << ": " << first.message;
    EXPECT_FALSE(first.cached) << c.name;
    const RevisionBuild second = BuildRevision("HEAD", options);
    EXPECT_EQ(second.built, c.built) << c.name << ": " << second.message;
    EXPECT_EQ(second.cached, c.remembered) << c.name << ": " << second.message;
  }
}

}  // namespace
}  // namespace samebits::runner
