// `samebits reference generate|show`: writes or prints the committed
// references for this platform and math profile (harness/analysis/references.h).
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "harness/analysis/compare.h"
#include "harness/analysis/judge.h"
#include "harness/analysis/references.h"
#include "harness/analysis/summary.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/runner/machine.h"

namespace samebits::cli {
namespace {

struct ReferenceFlags {
  MatrixFlags matrix;
  std::string run;
  bool quiet = false;
};

// Returns why the run cannot serve as a reference, or "" when it can: every
// child must have run to completion and every configuration must agree.
std::string WhyNotAReference(const harness::RunResult& run) {
  std::ostringstream why;
  for (const harness::CellResult& c : run.cells) {
    if (c.code == harness::ResultCode::kUnresolved || c.code == harness::ResultCode::kTimeout) {
      why << "  " << harness::ResultCodeName(c.code) << ": " << c.checkpoint << " " << c.scenario
          << " " << c.config.name << ": " << c.message << "\n";
    }
  }
  for (const harness::AgreementGroup& g : harness::GroupCells(run)) {
    const harness::CellResult& base = run.cells[g.baseline()];
    for (size_t k = 1; k < g.classes.size(); ++k) {
      const harness::CellResult& other = run.cells[g.classes[k].front()];
      const auto d = harness::FirstStepDifference(base.steps, other.steps);
      why << "  " << g.checkpoint << " " << g.scenario << ": " << other.config.name
          << " differs from " << base.config.name << " at step " << d->index << " (" << d->kind
          << ", position " << d->position << "): " << d->detail << "\n";
    }
    for (size_t i : g.cells) {
      const harness::CellResult& c = run.cells[i];
      if (!c.math || !base.math || c.math->fingerprint != base.math->fingerprint ||
          c.math->name != base.math->name || c.math->version != base.math->version) {
        why << "  " << g.checkpoint << " " << g.scenario << ": " << c.config.name
            << " reports another math library than " << base.config.name << "\n";
      }
    }
  }
  return why.str();
}

int Generate(const ReferenceFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.matrix.db);
  harness::RunResult run;
  if (flags.run.empty()) {
    run = RunMatrix(flags.matrix, SelectCells(flags.matrix), false, flags.quiet);
    RefuseUnrunnableSelection(run);
    run.run_id = store->SaveRun(run);
  } else {
    run = LoadRunArgument(*store, flags.run);
  }
  if (const std::string why = WhyNotAReference(run); !why.empty()) {
    std::fprintf(stderr,
                 "samebits: refusing to write references from run %lld: references come only "
                 "from a run where every child finished and every configuration agrees.\n%s",
                 static_cast<long long>(run.run_id), why.c_str());
    return 1;
  }
  const std::string dir = ReferencesDir(flags.matrix);
  std::map<std::string, harness::ReferenceGroup> groups;
  for (const harness::AgreementGroup& g : harness::GroupCells(run)) {
    const harness::CellResult& base = run.cells[g.baseline()];
    const std::string key = harness::ReferenceGroupKey(g.math, run.machine.arch);
    harness::ReferenceGroup& group = groups[key];
    if (group.key.empty()) {
      group.key = key;
      group.math = *base.math;
      if (base.build) group.revision = base.build->revision + (base.build->dirty ? "-dirty" : "");
    } else if (group.math.fingerprint != base.math->fingerprint) {
      throw UsageError("the run's " + g.math + " cells report different math libraries");
    }
    for (const harness::StepRecord& s : base.steps) {
      if (g.checkpoint.find_first_of(" \t\n") != std::string::npos) {
        // Encoded in the file, but worth a word: such names make poor keys.
      }
      group.lines.push_back(
          {g.checkpoint, g.scenario, s.index, s.kind, s.position, s.token, s.fnv1a64, s.xxh3_64});
    }
  }
  if (groups.empty()) {
    std::fprintf(stderr, "samebits: the run has no cell that ran; nothing to write\n");
    return 2;
  }
  for (auto& [key, group] : groups) {
    std::optional<harness::ReferenceGroup> old;
    try {
      old = harness::LoadReferenceGroup(dir, key);
    } catch (const harness::ReferenceError& e) {
      std::fprintf(stderr, "samebits: replacing an unreadable reference file: %s\n", e.what());
    }
    const std::string file = DisplayPath(dir + "/" + harness::ReferenceFileName(key));
    std::set<std::pair<std::string, std::string>> covered;
    for (const harness::ReferenceLine& l : group.lines) covered.insert({l.checkpoint, l.scenario});
    if (old) {
      const bool same_library = old->math.name == group.math.name &&
                                old->math.version == group.math.version &&
                                old->math.fingerprint == group.math.fingerprint;
      if (same_library) {
        // Keeps the outputs of pairs this run did not cover.
        for (const harness::ReferenceLine& l : old->lines) {
          if (covered.count({l.checkpoint, l.scenario}) == 0) group.lines.push_back(l);
        }
      } else {
        std::fprintf(stderr,
                     "note: %s was made with another math library (%s %s %s); replacing the "
                     "whole group\n",
                     file.c_str(), old->math.name.c_str(), old->math.version.c_str(),
                     old->math.fingerprint.c_str());
      }
      harness::ReferenceGroup unchanged = group;
      unchanged.revision = old->revision;
      if (harness::FormatReferenceGroup(unchanged) == harness::FormatReferenceGroup(*old)) {
        std::printf("%s: unchanged (%zu outputs)\n", file.c_str(), old->lines.size());
        continue;
      }
    }
    harness::SaveReferenceGroup(dir, group);
    std::printf("%s: wrote %zu outputs for %s (%s %s, fingerprint %s) from run %lld\n",
                file.c_str(), group.lines.size(), key.c_str(), group.math.name.c_str(),
                group.math.version.c_str(), group.math.fingerprint.c_str(),
                static_cast<long long>(run.run_id));
  }
  return 0;
}

int Show(const ReferenceFlags& flags) {
  const std::string dir = ReferencesDir(flags.matrix);
  const std::string arch = runner::LocalMachine().arch;
  int shown = 0;
  for (const std::string& profile : flags.matrix.math) {
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
                  profile == "portable" ? "" : (" --math " + profile).c_str());
      continue;
    }
    std::printf("%s", harness::FormatReferenceGroup(*group).c_str());
    ++shown;
  }
  return shown > 0 ? 0 : 1;
}

CommandSpec Setup(CLI::App& app) {
  auto flags = std::make_shared<ReferenceFlags>();
  CLI::App* sub = app.add_subcommand(
      "reference", "Writes or prints the committed references for this platform and math profile.");
  sub->require_subcommand(1);
  CLI::App* generate = sub->add_subcommand(
      "generate",
      "Runs the matrix (or takes a stored run) and, only if every configuration agrees, writes "
      "its outputs to references/<group>.txt: portable.txt for the portable profile (one group "
      "for every platform), libm-<arch>.txt for the system math library.");
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
      "  samebits reference generate --run 12");
  CLI::App* show = sub->add_subcommand(
      "show", "Prints this platform's reference groups for the math profiles given.");
  show->add_option("--math", flags->matrix.math,
                   "Shows these profiles' groups (default: portable,libm).")
      ->type_name("PROFILE,...")
      ->delimiter(',');
  show->add_option("--references-dir", flags->matrix.references_dir,
                   "Reads references from this folder instead of the project's references/.")
      ->type_name("DIR");
  show->footer("Examples:\n  samebits reference show\n  samebits reference show --math libm");
  show->preparse_callback([flags](size_t) { flags->matrix.math = {"portable", "libm"}; });
  return {sub, [flags, generate, show] {
            if (generate->parsed()) return Generate(*flags);
            if (show->parsed()) return Show(*flags);
            throw UsageError("reference: say generate or show");
          }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(reference, 30, Setup);

}  // namespace samebits::cli
