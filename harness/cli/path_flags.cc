// The path declarations (path_flags.h).
#include "harness/cli/path_flags.h"

#include <array>
#include <utility>

#include "harness/cli/commands.h"
#include "harness/store/location.h"

namespace samebits::cli {
namespace {

// The roles, each kept on its option as a validator that accepts every
// value and has no description (so `--help` is unchanged): the option owns
// its role, which lives and dies with it.
constexpr std::array<std::pair<PathRole, const char*>, 5> kRoleNames = {{
    {PathRole::kInput, "path-role:input"},
    {PathRole::kOutputFile, "path-role:output-file"},
    {PathRole::kOutputFolder, "path-role:output-folder"},
    {PathRole::kReadStore, "path-role:read-store"},
    {PathRole::kWriteStore, "path-role:write-store"},
}};

store::Access& StoreAccess() {
  static store::Access access = store::Access::kReadWrite;
  return access;
}

// Adds the values of `command`'s declared options, and of its parsed
// subcommands', to `paths`; notes whether a store is declared read-only or
// writable.
void CollectPaths(const CLI::App& command, store::CommandPaths& paths, bool& reads_store,
                  bool& writes_store) {
  for (const CLI::Option* option : command.get_options()) {
    const std::optional<PathRole> role = DeclaredRole(option);
    if (!role) continue;
    if (*role == PathRole::kReadStore) reads_store = true;
    if (*role == PathRole::kWriteStore) writes_store = true;
    const std::string flag = option->get_name();
    for (const std::string& value : option->results()) {
      switch (*role) {
        case PathRole::kInput:
          paths.inputs.push_back({flag, value});
          break;
        case PathRole::kOutputFile:
          paths.outputs.push_back({flag, value});
          break;
        case PathRole::kOutputFolder:
          paths.output_folders.push_back({flag, value});
          break;
        case PathRole::kReadStore:
        case PathRole::kWriteStore:
          // Empty is the default store; a server is no file an output
          // could name. A value naming no store this build can open is
          // refused here, before the command does anything.
          if (!value.empty() && store::UsableLocation(value).backend == store::Backend::kSqlite)
            paths.stores.push_back(value);
          break;
      }
    }
  }
  for (const CLI::App* sub : command.get_subcommands()) {
    CollectPaths(*sub, paths, reads_store, writes_store);
  }
}

}  // namespace

CLI::Option* AddStoreOption(CLI::App* sub, std::string& db, const std::string& what) {
  return sub
      ->add_option("--db", db,
                   what +
                       " this store instead of .samebits/samebits.db under the project root: an "
                       "SQLite file (created on first use by a command that writes), or a "
                       "PostgreSQL server given as a postgresql:// or postgres:// URL or a libpq "
                       "keyword string ('host=HOST dbname=DB'), when samebits is built with "
                       "libpq. A URL of any other scheme is refused.")
      ->type_name("PATH|URL");
}

CLI::Option* Declare(CLI::Option* option, PathRole role) {
  for (const auto& [known, name] : kRoleNames) {
    if (known == role)
      option->check(CLI::Validator([](const std::string&) { return std::string(); }, "", name));
  }
  return option;
}

std::optional<PathRole> DeclaredRole(const CLI::Option* option) {
  // get_validator is not const, but only looks.
  auto* mutable_option = const_cast<CLI::Option*>(option);
  for (const auto& [role, name] : kRoleNames) {
    try {
      mutable_option->get_validator(name);
      return role;
    } catch (const CLI::OptionNotFound&) {
    }
  }
  return std::nullopt;
}

store::CommandPaths ParsedPaths(const CLI::App& command, bool* reads_only) {
  store::CommandPaths paths;
  paths.stores.push_back(StorePath(""));
  bool reads = false, writes = false;
  CollectPaths(command, paths, reads, writes);
  if (reads_only != nullptr) *reads_only = reads && !writes;
  return paths;
}

void EnforcePathRules(const CLI::App& command) {
  bool reads_only = false;
  store::CheckCommandOutputs(ParsedPaths(command, &reads_only));
  if (reads_only) StoreAccess() = store::Access::kRead;
}

store::Access DeclaredStoreAccess() {
  return StoreAccess();
}

}  // namespace samebits::cli
