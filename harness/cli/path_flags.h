// What each command-line value that names a file is to its command: the
// declarations the output guard (harness/store/output_file.h) and the
// store's access are decided from, in one place for every command.
//
// Every option or positional whose value names a file or folder is declared
// where it is added:
//
//   Declare(sub->add_option("-o,--output", flags->output, "...")->type_name("FILE"),
//           PathRole::kOutputFile);
//
// main.cc then calls EnforcePathRules on the command given, before it runs:
// its outputs are checked against its store, its inputs and each other, and
// a command whose store is declared kReadStore opens it read-only whatever
// its code asks (OpenStore, commands.h). tests/harness/cli_paths_test.cc
// walks every command and option of the program and fails on any value
// named FILE, PATH, DIR, DB or BUNDLE that is not declared.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

#include "harness/store/output_file.h"
#include "harness/store/store.h"

namespace samebits::cli {

enum class PathRole {
  kInput,         // a file or folder read (or a value that may name one)
  kOutputFile,    // a file written for the user
  kOutputFolder,  // a folder written into (builds, references)
  kReadStore,     // the store, which this command only reads
  kWriteStore,    // the store, which this command may write
};

// Adds `--db PATH|URL` to `sub`, its help `what` ("Reads", "Stores runs
// in") and then what every command's store value may be (store/location.h),
// written once. Returns the option, for Declare.
CLI::Option* AddStoreOption(CLI::App* sub, std::string& db, const std::string& what);

// Records `role` for `option`. Returns `option`.
CLI::Option* Declare(CLI::Option* option, PathRole role);

// Returns the role declared for `option`, if any.
std::optional<PathRole> DeclaredRole(const CLI::Option* option);

// Returns the parsed values of `command`'s declared options (and of its
// parsed subcommands'), with the default store always among the stores.
// Sets `*reads_only` (when given) to whether the command declares its store
// read-only.
store::CommandPaths ParsedPaths(const CLI::App& command, bool* reads_only = nullptr);

// Checks the outputs of the parsed `command` (store::CheckCommandOutputs)
// and, when it declares its store read-only, makes every OpenStore of this
// process read-only. Throws std::invalid_argument.
void EnforcePathRules(const CLI::App& command);

// Returns the store access the running command declared (kReadWrite when
// it declared none).
store::Access DeclaredStoreAccess();

}  // namespace samebits::cli
