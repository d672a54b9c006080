#include "harness/cli/revision_build_flags.h"

#include <filesystem>

#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"

namespace samebits::cli {

void AddRevisionBuildFlags(CLI::App* sub, runner::RevisionBuildOptions& build,
                           const std::string& revision) {
  sub->add_option("--build", build.build_command,
                  "Builds " + revision +
                      ": this shell command runs in its worktree (default: the project's CMake "
                      "build of samebits-engine, with ccache as the compiler launcher when "
                      "present).")
      ->type_name("CMD");
  Declare(sub->add_option("--repo", build.repo,
                          "Takes revisions from the repository holding this folder (default: the "
                          "current folder's).")
              ->type_name("DIR"),
          PathRole::kInput);
  Declare(sub->add_option("--cache-dir", build.cache_dir,
                          "Keeps one worktree and build per source tree here (default: builds/ "
                          "next to the database); a tree built once is never built again.")
              ->type_name("DIR"),
          PathRole::kOutputFolder);
}

runner::RevisionBuildOptions WithDefaultCacheDir(runner::RevisionBuildOptions build,
                                                 const std::string& db) {
  // Never the parent of a server's URL (a folder named "postgresql:").
  if (build.cache_dir.empty())
    build.cache_dir = (std::filesystem::path(StoreSideFolder(db)) / "builds").string();
  return build;
}

}  // namespace samebits::cli
