// `samebits import FILE...`: adds bundled runs to the local store, once
// each, all or nothing (harness/exchange/import.h).
#include <cstdio>
#include <memory>
#include <optional>

#include "harness/cli/commands.h"
#include "harness/cli/key_file.h"
#include "harness/cli/path_flags.h"
#include "harness/exchange/bundle.h"
#include "harness/exchange/bundle_signature.h"
#include "harness/exchange/import.h"

namespace samebits::cli {
namespace {

struct ImportFlags {
  std::vector<std::string> files;
  std::string db;
  std::string verify;  // a key file: every bundle must be signed with it
};

int Import(const ImportFlags& flags) {
  // Every bundle is read and checked before the store is opened, so a bad
  // one leaves the store as it was (not even created).
  const std::optional<exchange::BundleKey> key = ReadKeyFile(flags.verify);
  std::vector<harness::RunResult> runs;
  for (const std::string& file : flags.files) {
    std::vector<harness::RunResult> more =
        exchange::ReadBundle(file, exchange::kMaxBundleBytes, key ? &*key : nullptr);
    runs.insert(runs.end(), std::make_move_iterator(more.begin()),
                std::make_move_iterator(more.end()));
  }
  std::unique_ptr<store::Store> store = OpenStore(flags.db);
  exchange::ImportOptions options;
  options.root = GetPaths().root;  // dump paths are stored relative to it (SCHEMA.md)
  const exchange::ImportResult result = exchange::ImportRuns(*store, runs, options);
  std::string ids;
  for (int64_t id : result.added) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  std::printf("imported %zu run%s%s; %d already present", result.added.size(),
              result.added.size() == 1 ? "" : "s", ids.empty() ? "" : (" (" + ids + ")").c_str(),
              result.already_present);
  if (result.dumps_written > 0)
    std::printf("; wrote %d logit dump%s", result.dumps_written,
                result.dumps_written == 1 ? "" : "s");
  if (result.orphans_swept > 0)
    std::printf("; removed %d dump folder%s an interrupted import had left", result.orphans_swept,
                result.orphans_swept == 1 ? "" : "s");
  std::printf("\n");
  return 0;
}

CommandSpec SetupImport(CLI::App& app) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* sub = app.add_subcommand(
      "import",
      "Adds the runs of bundles (from `samebits export`) to the local store. Importing a run "
      "the store holds already adds nothing; a bundle that is damaged, modified, too large "
      "or from another bundle version is refused and nothing is imported. Raw logit rows a "
      "bundle carries become dump files next to the database (dumps/import-<content id>/); "
      "dump statistics are kept in the store.");
  Declare(sub->add_option("FILE", flags->files, "The bundle files to import.")
              ->type_name("FILE")
              ->required(),
          PathRole::kInput);
  Declare(sub->add_option("--verify", flags->verify,
                          "Imports only bundles signed with this key file (see `samebits export "
                          "--sign`) and unchanged since; one that is not is refused and nothing "
                          "is imported.")
              ->type_name("KEYFILE"),
          PathRole::kInput);
  Declare(AddStoreOption(sub, flags->db, "Writes to"), PathRole::kWriteStore);
  sub->footer(
      "Exit status: 0 when every bundle was imported (or was present already), 2 when any\n"
      "was refused (then nothing was imported).\n"
      "Examples:\n"
      "  samebits import arm64.bundle.json\n"
      "  samebits import a.json b.json --db /tmp/both.db\n"
      "  samebits import arm64.bundle.json --verify team.key");
  return {sub, [flags] { return Import(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(import, 71, SetupImport);

}  // namespace samebits::cli
