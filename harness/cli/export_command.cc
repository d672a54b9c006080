// `samebits export [RUN...] -o FILE`: writes stored runs as a bundle
// (harness/exchange/bundle.h) to carry to another machine's store, with
// their raw logit dumps' statistics and, up to a size, their rows
// (harness/exchange/bundle_dumps.h).
#include <cstdio>
#include <memory>
#include <optional>

#include "harness/cli/commands.h"
#include "harness/cli/key_file.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/exchange/bundle.h"
#include "harness/exchange/bundle_dumps.h"
#include "harness/exchange/bundle_signature.h"

namespace samebits::cli {
namespace {

struct ExportFlags {
  std::vector<std::string> runs;
  std::string output;
  std::string db;
  std::string sign;  // a key file to sign the bundle with
  long long max_dump_bytes = static_cast<long long>(exchange::kDefaultMaxDumpBytes);
};

int Export(const ExportFlags& flags) {
  // The key first: a missing or short key costs nothing.
  const std::optional<exchange::BundleKey> key = ReadKeyFile(flags.sign);
  std::unique_ptr<store::Store> store = OpenStore(flags.db);
  std::vector<harness::RunResult> runs;
  const std::vector<std::string> which =
      flags.runs.empty() ? std::vector<std::string>{"latest"} : flags.runs;
  int with_rows = 0, statistics_only = 0;
  for (const std::string& w : which) {
    runs.push_back(LoadRunArgument(*store, w));
    // Dump paths are stored relative to the project root (SCHEMA.md).
    for (const std::string& warning : exchange::AttachDumps(
             runs.back(), GetPaths().root, static_cast<uint64_t>(flags.max_dump_bytes)))
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
    for (const harness::CellResult& c : runs.back().cells) {
      if (!c.dump) continue;
      ++(c.dump->values.empty() ? statistics_only : with_rows);
    }
  }
  exchange::WriteBundle(runs, flags.output, key ? &*key : nullptr);
  std::string dumps;
  if (with_rows + statistics_only > 0)
    dumps = " (logit dumps: " + std::to_string(with_rows) + " with rows, " +
            std::to_string(statistics_only) + " statistics only)";
  std::printf("wrote %zu run%s to %s%s%s\n", runs.size(), runs.size() == 1 ? "" : "s",
              DisplayPath(flags.output).c_str(), dumps.c_str(),
              key ? (", signed with key " + key->id).c_str() : "");
  return 0;
}

CommandSpec SetupExport(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* sub = app.add_subcommand(
      "export",
      "Writes stored runs (machine, build, math library fingerprints, every cell's steps, "
      "hashes and traces, and the statistics and rows of raw logit dumps) as one "
      "self-describing JSON bundle, for `samebits import` or `samebits compare` on another "
      "machine.");
  sub->add_option("RUN", flags->runs,
                  "The runs to export: ids from `samebits runs`, or latest (the default).")
      ->type_name("RUN");
  Declare(
      sub->add_option("-o,--output", flags->output,
                      "Writes the bundle to this file (through a temporary file renamed over it).")
          ->type_name("FILE")
          ->required(),
      PathRole::kOutputFile);
  sub->add_option("--max-dump-bytes", flags->max_dump_bytes,
                  "Puts a cell's raw logit rows into the bundle when its dump is at most this "
                  "many bytes (default 1048576, at most 67108864); a larger dump travels as "
                  "per-step statistics only (argmax, max |logit|, NaN and Inf counts). 0 "
                  "exports statistics only.")
      ->type_name("N")
      ->check(WholeNumberInRange(0, static_cast<long long>(exchange::kMaxBundledDumpBytes)));
  Declare(sub->add_option("--sign", flags->sign,
                          "Signs the bundle with this key file (HMAC-SHA256; any file of 32 bytes "
                          "to 64 KiB, such as `head -c 32 /dev/urandom > team.key`), so that "
                          "`samebits import --verify` and `compare --verify` with the same key "
                          "refuse it if anything in it changes.")
              ->type_name("KEYFILE"),
          PathRole::kInput);
  Declare(AddStoreOption(sub, flags->db, "Reads"), PathRole::kReadStore);
  sub->footer(
      "A cell's dump file that cannot be read (deleted, damaged, or not matching the cell's\n"
      "hashes) is named in a warning and the cell is exported without it.\n\n"
      "Exit status: 0 when the bundle was written, 2 when it could not be.\n"
      "Examples:\n"
      "  samebits export -o x86.bundle.json\n"
      "  samebits export 11 12 -o runs.json --db /tmp/experiment.db\n"
      "  samebits export --max-dump-bytes 0 -o small.json\n"
      "  samebits export -o x86.bundle.json --sign team.key");
  return {sub, [flags] { return Export(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(export, 70, SetupExport);

}  // namespace samebits::cli
