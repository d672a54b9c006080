// Building an engine from its profile's `build` command (profile_build.h).
#include "harness/runner/profile_build.h"

#include <stdexcept>

#include "harness/runner/child.h"
#include "harness/runner/revision_build.h"

namespace samebits::runner {

double BuildEngine(const EngineProfile& profile, double timeout_seconds) {
  if (profile.build.empty()) {
    throw ProfileError(profile.file, "build", "a build command (the profile declares none)");
  }
  std::string shown;
  for (const std::string& a : profile.build) shown += (shown.empty() ? "" : " ") + a;
  // env -C runs the command in the profile's folder with its argv as given.
  ChildSpec spec;
  spec.program = "/usr/bin/env";
  spec.args = {"-C", profile.folder.empty() ? "." : profile.folder};
  spec.args.insert(spec.args.end(), profile.build.begin(), profile.build.end());
  // No CCACHE_BASEDIR of ours: the profile's folder is not its sources'.
  spec.env = BuildEnvironment("");
  spec.timeout_seconds = timeout_seconds;
  spec.stderr_tail_lines = 40;
  const ChildOutcome outcome = RunChild(spec);
  const std::string where = "the build of engine " + profile.name + " (" + shown + ", in " +
                            profile.folder + ", from " + profile.file + ")";
  const auto tail = [&] {
    std::string out = outcome.stdout_text;
    if (out.size() > 4000) out = "..." + out.substr(out.size() - 4000);
    return out + outcome.stderr_tail;
  };
  if (!outcome.started)
    throw std::runtime_error(where + " could not start: " + outcome.start_error);
  if (outcome.timed_out) {
    throw std::runtime_error(where + " ran past " + std::to_string(timeout_seconds) +
                             " s and was killed\n" + tail());
  }
  if (outcome.signal != 0 || outcome.exit_code != 0) {
    const int status = outcome.signal != 0 ? 128 + outcome.signal : outcome.exit_code;
    throw std::runtime_error(where + " failed (exit " + std::to_string(status) + ")\n" + tail());
  }
  return outcome.elapsed_ms / 1000.0;
}

}  // namespace samebits::runner
