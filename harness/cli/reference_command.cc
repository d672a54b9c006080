// `samebits reference generate|show`: writes or prints the committed
// references for this platform and numeric profile (math and quant-dot;
// harness/analysis/references.h).
#include <cstdio>
#include <fstream>
#include <memory>

#include "harness/analysis/reference_generation.h"
#include "harness/analysis/references.h"
#include "harness/cli/commands.h"
#include "harness/cli/engine_choice.h"
#include "harness/cli/matrix_flags.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/runner/machine.h"
#include "harness/runner/matrix.h"
#include "harness/runner/matrix_flag_names.h"
#include "harness/runner/unavailable.h"

namespace samebits::cli {
namespace {

struct ReferenceFlags {
  MatrixFlags matrix;
  std::string run;
  bool quiet = false;
};

// Writes `group` into `dir` over the committed file: keeping the pairs the
// run did not cover when the math library is the same, and leaving the file
// alone when only the revision would change.
void WriteGroup(const std::string& dir, harness::ReferenceGroup& group, int64_t run_id) {
  std::optional<harness::ReferenceGroup> old;
  try {
    old = harness::LoadReferenceGroup(dir, group.key);
  } catch (const harness::ReferenceError& e) {
    std::fprintf(stderr, "samebits: replacing an unreadable reference file: %s\n", e.what());
  }
  const std::string file = DisplayPath(dir + "/" + harness::ReferenceFileName(group.key));
  if (old) {
    if (harness::SameMathLibrary(group, *old)) {
      harness::KeepUncoveredPairs(group, *old);
    } else {
      std::fprintf(stderr,
                   "note: %s was made with another math library (%s %s %s); replacing the "
                   "whole group\n",
                   file.c_str(), old->math.name.c_str(), old->math.version.c_str(),
                   old->math.fingerprint.c_str());
    }
    if (harness::OnlyRevisionDiffers(group, *old)) {
      std::printf("%s: unchanged (%zu outputs)\n", file.c_str(), old->lines.size());
      return;
    }
  }
  harness::SaveReferenceGroup(dir, group);
  std::printf("%s: wrote %zu outputs for %s (%s %s, fingerprint %s) from run %lld\n", file.c_str(),
              group.lines.size(), group.key.c_str(), group.math.name.c_str(),
              group.math.version.c_str(), group.math.fingerprint.c_str(),
              static_cast<long long>(run_id));
}

int Generate(const ReferenceFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.matrix.db);
  harness::RunResult run;
  if (flags.run.empty()) {
    const runner::MatrixRunOptions options = RunOptionsFor(flags.matrix);
    std::vector<std::string> left_out;  // what the engine can never run here
    const std::vector<runner::Cell> cells = runner::SelectRunnableCells(options, &left_out);
    for (const std::string& note : left_out) std::printf("%s\n", note.c_str());
    run = runner::RunMatrix(options, cells, false, flags.quiet);
    runner::RefuseUnrunnableSelection(run);
    run.run_id = store->SaveRun(run);
  } else {
    run = LoadRunArgument(*store, flags.run);
  }
  if (const std::string why = harness::WhyNotAReference(run); !why.empty()) {
    std::fprintf(stderr,
                 "samebits: refusing to write references from run %lld: references come only "
                 "from a run where every child finished and every configuration agrees.\n%s",
                 static_cast<long long>(run.run_id), why.c_str());
    return 1;
  }
  std::map<std::string, harness::ReferenceGroup> groups = harness::ReferenceGroupsFromRun(run);
  if (groups.empty()) {
    std::fprintf(stderr, "samebits: the run has no cell that ran; nothing to write\n");
    return 2;
  }
  const std::string dir = ReferencesDir(flags.matrix);
  for (auto& [key, group] : groups) WriteGroup(dir, group, run.run_id);
  return 0;
}

int Show(const ReferenceFlags& flags) {
  const std::string dir = ReferencesDir(flags.matrix);
  const std::string arch = runner::LocalMachine().arch;
  int shown = 0;
  for (const std::string& math : flags.matrix.math) {
    for (const std::string& quant_dot : flags.matrix.quant_dot) {
      const harness::NumericProfile profile{math, quant_dot};
      const std::string key = harness::ReferenceGroupKey(profile, arch);
      std::optional<harness::ReferenceGroup> group;
      try {
        group = harness::LoadReferenceGroup(dir, key);
      } catch (const harness::ReferenceError& e) {
        throw UsageError(e.what());
      }
      if (!group) {
        std::printf("# %s/%s: none (make it: samebits reference generate%s)\n", dir.c_str(),
                    harness::ReferenceFileName(key).c_str(),
                    harness::ProfileFlags(profile).c_str());
        continue;
      }
      std::printf("%s", harness::FormatReferenceGroup(*group).c_str());
      ++shown;
    }
  }
  return shown > 0 ? 0 : 1;
}

CommandSpec SetupReference(CLI::App& app) {
  auto flags = std::make_shared<ReferenceFlags>();
  CLI::App* sub = app.add_subcommand(
      "reference",
      "Writes or prints the committed references for this platform and numeric profile.");
  sub->require_subcommand(1);
  CLI::App* generate = sub->add_subcommand(
      "generate",
      "Runs the matrix (or takes a stored run) and, only if every configuration agrees, writes "
      "its outputs to references/<group>.txt: portable.txt for the portable profile (one group "
      "for every platform), libm-<arch>.txt for the system math library, portable-int8.txt and "
      "libm-int8-<arch>.txt for the same under --quant-dot int8.");
  AddMatrixFlags(generate, &flags->matrix);
  generate
      ->add_option("--run", flags->run,
                   "Takes the outputs from this stored run (an id, or `latest`).")
      ->type_name("ID");
  generate->add_flag("-q,--quiet", flags->quiet, "Prints no progress.");
  generate->footer(
      "Pairs (checkpoint, scenario) the run did not cover keep their lines when the math\n"
      "library is the same. Review the diff and commit it.\n\n"
      "Examples:\n"
      "  samebits reference generate\n"
      "  samebits reference generate --math libm\n"
      "  samebits reference generate --quant-dot int8 --checkpoint synthetic:tiny-q4_0\n"
      "  samebits reference generate --run 12");
  CLI::App* show = sub->add_subcommand(
      "show", "Prints this platform's reference groups for the numeric profiles given.");
  show->add_option(runner::kMathFlag, flags->matrix.math,
                   "Shows these math profiles' groups (default: portable,libm).")
      ->type_name("PROFILE,...")
      ->delimiter(',');
  show->add_option(runner::kQuantDotFlag, flags->matrix.quant_dot,
                   "Shows these quantized dot-product profiles' groups, under each math profile "
                   "(default: exact,int8).")
      ->type_name("PROFILE,...")
      ->delimiter(',');
  Declare(
      show->add_option("--references-dir", flags->matrix.references_dir,
                       "Reads references from this folder instead of the project's references/.")
          ->type_name("DIR")
          ->check(ExistingFolder()),
      PathRole::kInput);
  show->footer(
      "Examples:\n  samebits reference show\n  samebits reference show --math libm\n"
      "  samebits reference show --math portable --quant-dot int8");
  // Without --math or --quant-dot, every numeric profile samebits-engine's
  // profile lists (its math and quant_dot axes).
  show->preparse_callback([flags](size_t) {
    const std::shared_ptr<const runner::EngineProfile> own = OwnEngineProfile();
    flags->matrix.math = runner::EnumeratedAxisValues(*own, "math", "reference show lists them");
    flags->matrix.quant_dot =
        runner::EnumeratedAxisValues(*own, "quant_dot", "reference show lists them");
  });
  return {sub, [flags, generate, show] {
            if (generate->parsed()) return Generate(*flags);
            if (show->parsed()) return Show(*flags);
            throw UsageError("reference: say generate or show");
          }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(reference, 30, SetupReference);

}  // namespace samebits::cli
