// The rules for every file a `samebits` command names, tested over the
// program's own list of commands and options (the registry in
// harness/cli/commands.h and the declarations in harness/cli/path_flags.h),
// so that a command or flag added later is covered without anyone adding
// it here:
//   - every value that names a file or folder declares what it is;
//   - no output flag writes over the store, its side files, an input of the
//     same command, another output, a FIFO, a device or a folder, and a
//     symlink stays a symlink;
//   - a command that only reads the store creates nothing, changes no byte
//     and reads a store in a folder it cannot write;
//   - nothing a command prints from the store reaches the terminal as a
//     control byte (ESC, OSC, BEL, a C1 CSI, a carriage return), whatever
//     stored text field holds it.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "harness/analysis/terminal_text.h"
#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/store/location.h"
#include "harness/store/output_file.h"
#include "tests/harness/program_commands.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;
using standin::BinDir;
using standin::CommandResult;
using standin::FileBytes;
using standin::RunCommand;

// Returns the options of `command` declared with `role`.
std::vector<const CLI::Option*> WithRole(const Command& command, PathRole role) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* option : command.app->get_options()) {
    if (DeclaredRole(option) == role) out.push_back(option);
  }
  return out;
}

bool HasRole(const Command& command, PathRole role) {
  return !WithRole(command, role).empty();
}

// Returns how `option` is given on a command line: its long flag, or
// nothing for a positional.
std::string FlagOf(const CLI::Option* option) {
  if (option->get_positional()) return "";
  if (!option->get_lnames().empty()) return "--" + option->get_lnames().front();
  return "-" + option->get_snames().front();
}

// Returns the names of the files in `dir`, recursively.
std::set<std::string> Listing(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    out.insert(entry.path().lexically_relative(dir).string());
  }
  return out;
}

// Returns the command line for `command`: its words, then a value for each
// required option except `skip` (an input file for inputs, `required_output`
// for outputs, "1" for anything else: a run id, a count), then `extra`.
std::vector<std::string> ArgvFor(const Command& command, const CLI::Option* skip,
                                 const std::string& input_file, const std::string& required_output,
                                 const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {BinDir() + "/samebits"};
  argv.insert(argv.end(), command.words.begin(), command.words.end());
  for (const CLI::Option* option : command.app->get_options()) {
    if (option == skip || !option->get_required()) continue;
    const std::optional<PathRole> role = DeclaredRole(option);
    std::string value = RequiredValueFor(option);
    if (role == PathRole::kInput) value = input_file;
    if (role == PathRole::kOutputFile || role == PathRole::kOutputFolder) value = required_output;
    const int count = std::max(1, option->get_items_expected_min());
    for (int i = 0; i < count; ++i) {
      if (!FlagOf(option).empty()) argv.push_back(FlagOf(option));
      argv.push_back(value);
    }
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// Returns the store flag of `command` ("" when it has none).
std::string StoreFlag(const Command& command) {
  for (PathRole role : {PathRole::kReadStore, PathRole::kWriteStore}) {
    for (const CLI::Option* option : WithRole(command, role)) return FlagOf(option);
  }
  return "";
}

class CliPaths : public ::testing::Test {
 protected:
  CliPaths() : dir_("cli_paths") {}
  void SetUp() override {
    db_ = dir_.path() / "runs.db";
    // A SQLite file is enough: the guard refuses before the store is opened.
    std::ofstream(db_) << "the store's bytes";
    input_ = dir_.path() / "input.file";
    std::ofstream(input_) << "an input's bytes";
  }
  standin::TempDir dir_;
  fs::path db_, input_;
  ProgramCommands program_;
};

// Every value whose name says it is a file, folder or store declares its
// role, so that the guard and the store's access know it. A new option
// with such a value and no declaration fails here.
TEST_F(CliPaths, EveryValueThatNamesAFileDeclaresWhatItIs) {
  const std::regex names_a_file("\\b(FILE|PATH|DIR|DB|BUNDLE|ENGINE)\\b");
  int declared = 0;
  for (const Command& command : program_.all()) {
    for (const CLI::Option* option : command.app->get_options()) {
      if (!std::regex_search(option->get_type_name(), names_a_file)) continue;
      EXPECT_TRUE(DeclaredRole(option).has_value())
          << "samebits " << command.words.back() << " " << option->get_name() << " ("
          << option->get_type_name() << ") declares no PathRole (harness/cli/path_flags.h)";
      ++declared;
    }
  }
  EXPECT_GT(declared, 20) << "the walk found too few options to be the program's";
}

// Every output of every command refuses the store and its side files (also
// through a symlink or a dangling one), every input file of the same
// command, another output of it, and a FIFO, a device or a folder; and
// leaves each as it was.
TEST_F(CliPaths, NoOutputWritesOverTheStoreAnInputOrASpecialFile) {
  const fs::path link = dir_.path() / "innocent.md";
  fs::create_symlink(db_, link);
  const fs::path dangling = dir_.path() / "dangling.md";
  fs::create_symlink(db_.string() + "-journal", dangling);
  const fs::path fifo = dir_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const fs::path folder = dir_.path() / "folder";
  fs::create_directories(folder);
  const std::string store_bytes = FileBytes(db_);
  int outputs = 0;
  for (const Command& command : program_.all()) {
    const std::string store_flag = StoreFlag(command);
    for (PathRole role : {PathRole::kOutputFile, PathRole::kOutputFolder}) {
      for (const CLI::Option* output : WithRole(command, role)) {
        ++outputs;
        std::vector<std::string> targets;
        if (!store_flag.empty()) {
          for (const std::string& t : {db_.string(), db_.string() + "-wal", db_.string() + "-shm",
                                       db_.string() + "-journal", link.string(), dangling.string(),
                                       (folder / ".." / "runs.db").string()}) {
            targets.push_back(t);
          }
        }
        if (role == PathRole::kOutputFile) {
          for (const std::string& t : {fifo.string(), folder.string(), std::string("/dev/null")})
            targets.push_back(t);
        }
        for (const std::string& target : targets) {
          std::vector<std::string> extra;
          if (!store_flag.empty()) extra = {store_flag, db_.string()};
          // An input flag's value is the file the output must not replace.
          const std::vector<std::string> argv = ArgvFor(
              command, output, input_.string(), (dir_.path() / "other.out").string(), extra);
          std::vector<std::string> full = argv;
          if (!FlagOf(output).empty()) full.push_back(FlagOf(output));
          full.push_back(target);
          const CommandResult r = RunCommand(full);
          EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
          EXPECT_NE(r.output.find("refusing to write " + output->get_name()), std::string::npos)
              << r.command << "\n"
              << r.output;
          EXPECT_EQ(FileBytes(db_), store_bytes) << r.command;
          EXPECT_EQ(FileBytes(input_), "an input's bytes") << r.command;
        }
        // Each input of the command (a file, not a folder) given the
        // output's path.
        for (const CLI::Option* input : WithRole(command, PathRole::kInput)) {
          if (input->get_type_name() == "DIR") continue;
          // A required output is given once, by ArgvFor, with the input's path.
          const bool required = output->get_required();
          std::vector<std::string> argv =
              ArgvFor(command, input, input_.string(),
                      required ? input_.string() : (dir_.path() / "other.out").string(), {});
          if (!FlagOf(input).empty()) argv.push_back(FlagOf(input));
          argv.push_back(input_.string());
          if (!required) {
            if (!FlagOf(output).empty()) argv.push_back(FlagOf(output));
            argv.push_back(input_.string());
          }
          const CommandResult r = RunCommand(argv);
          EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
          EXPECT_NE(r.output.find("this command also reads it ("), std::string::npos)
              << r.command << "\n"
              << r.output;
          EXPECT_EQ(FileBytes(input_), "an input's bytes") << r.command;
        }
        EXPECT_TRUE(fs::is_symlink(link));
        EXPECT_FALSE(fs::exists(db_.string() + "-journal"));
        EXPECT_TRUE(fs::is_fifo(fifo));
        EXPECT_TRUE(fs::is_directory(folder));
      }
    }
    // Two outputs of one command never name one file.
    const std::vector<const CLI::Option*> files = WithRole(command, PathRole::kOutputFile);
    if (files.size() >= 2) {
      const fs::path same = dir_.path() / "same.out";
      std::vector<std::string> argv = ArgvFor(command, nullptr, input_.string(), same.string(), {});
      for (const CLI::Option* output : files) {
        if (output->get_required()) continue;
        argv.push_back(FlagOf(output));
        argv.push_back(same.string());
      }
      const CommandResult r = RunCommand(argv);
      EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
      EXPECT_NE(r.output.find("it is also written as"), std::string::npos) << r.output;
      EXPECT_FALSE(fs::exists(same)) << r.command;
    }
  }
  EXPECT_GE(outputs, 8) << "the walk found too few output flags to be the program's";
}

// Negative control for the test above: the guard the program applies
// accepts every output flag given a fresh file beside the store.
TEST_F(CliPaths, AFreshFileBesideTheStoreIsAccepted) {
  for (const Command& command : program_.all()) {
    for (const CLI::Option* output : WithRole(command, PathRole::kOutputFile)) {
      store::CommandPaths paths;
      paths.stores = {db_.string()};
      paths.inputs = {{"FILE", input_.string()}};
      paths.outputs = {{output->get_name(), (dir_.path() / "runs.db.md").string()}};
      EXPECT_NO_THROW(store::CheckCommandOutputs(paths)) << output->get_name();
    }
  }
}

// Every command that takes a store (the walk finds them by their declared
// store role) decides what its --db value names in one place
// (store/location.h): a PostgreSQL URL or keyword string is a server, never
// a file, and a URL of another scheme is refused. Each exits 2 naming the
// value, and creates nothing: no folder named after the scheme (what
// `--db postgresql://...` once made), no file named after the keyword string.
TEST_F(CliPaths, EveryStoreFlagTakesAServerOrRefusesAnUnknownSchemeAndCreatesNothing) {
  const fs::path cwd = dir_.path() / "cwd";
  fs::create_directories(cwd);
  const std::string in_cwd = "cd " + standin::ShellQuote(cwd.string()) + " &&";
  // A server nobody listens on: with libpq the command fails to connect
  // (port 1 refuses at once), without it it is refused as unsupported.
  const std::vector<std::string> servers = {
      "postgresql://samebits@127.0.0.1:1/none?connect_timeout=5",
      "postgres://127.0.0.1:1/none?connect_timeout=5",
      "host=127.0.0.1 port=1 dbname=none connect_timeout=5"};
  const std::vector<std::string> unknown = {"xyz://somewhere/runs.db", "sqlite:///tmp/runs.db",
                                            "mysql://host/db", "file://runs.db"};
  int commands = 0, connected = 0;
  for (const Command& command : program_.all()) {
    const std::string flag = StoreFlag(command);
    if (flag.empty()) continue;
    ++commands;
    for (const std::string& value : servers) {
      const CommandResult r = RunCommand(
          ArgvFor(command, nullptr, input_.string(), (cwd / "out.file").string(), {flag, value}),
          in_cwd);
      EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
      // Without libpq every command refuses the value before anything
      // else; with it, a command may refuse its other values (no git
      // repository for bisect) before it connects.
      if (!store::PostgresSupported()) {
        EXPECT_NE(r.output.find("built without libpq"), std::string::npos) << r.command << "\n"
                                                                           << r.output;
      } else if (r.output.find("cannot connect to the PostgreSQL server at 127.0.0.1:1") !=
                 std::string::npos) {
        ++connected;
      }
      EXPECT_EQ(Listing(cwd), std::set<std::string>()) << r.command << " created a file";
    }
    for (const std::string& value : unknown) {
      const CommandResult r = RunCommand(
          ArgvFor(command, nullptr, input_.string(), (cwd / "out.file").string(), {flag, value}),
          in_cwd);
      EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
      EXPECT_NE(r.output.find("is not a store samebits knows"), std::string::npos)
          << r.command << "\n"
          << r.output;
      EXPECT_EQ(Listing(cwd), std::set<std::string>()) << r.command << " created a file";
    }
  }
  for (const char* made : {"postgresql:", "postgres:", "xyz:", "sqlite:", "mysql:", "file:"}) {
    EXPECT_FALSE(fs::exists(fs::path(SAMEBITS_SOURCE_DIR) / made)) << made;
    EXPECT_FALSE(fs::exists(fs::path(SAMEBITS_SOURCE_DIR) / ".samebits" / made)) << made;
  }
  EXPECT_GE(commands, 10) << "the walk found too few commands with a store to be the program's";
  // With libpq, the commands that open their store at once (runs, show,
  // report, diff, export, import, compare, run --list...) named the host
  // they could not reach.
  if (store::PostgresSupported()) {
    EXPECT_GE(connected, 3 * 8);
  }
}

// Returns a shell prefix that runs a command as an unprivileged user when
// this process is root (root writes read-only folders anyway), or "".
std::string Unprivileged() {
  return ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
}

// Every command that declares its store read-only: a missing store is "no
// such store" (exit 2) and nothing is created; a real store in rollback
// journal mode keeps every byte and gains no side file; and a store in a
// folder the command cannot write is read.
TEST_F(CliPaths, ACommandThatReadsTheStoreNeverWritesIt) {
  const std::string sb = BinDir() + "/samebits";
  const fs::path stored = dir_.path() / "store";
  fs::create_directories(stored);
  const std::string db = (stored / "runs.db").string();
  const std::string scenario = standin::WriteScenario(dir_.path());
  const CommandResult made = RunCommand(
      {sb, "run", "--engine", standin::FaultyEngine(dir_.path(), "ok"), "--checkpoint",
       "synthetic:tiny", "--scenario", scenario, "--config", "reference", "--db", db, "-q",
       // With dumps, every reader has something to read: `conform` compares
       // the run's logit rows with themselves instead of finding none.
       "--dump-logits"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // A sharded gate's one shard under group "1" (the value the walk gives a
  // required option), so that `verdict --group 1` has a group to read. No
  // reference holds the stand-in's scenario: the gate, and the verdict,
  // judge it "no reference" (exit 1), which is not what is tested here.
  const fs::path no_references = dir_.path() / "no-references";
  fs::create_directories(no_references);
  const CommandResult shard = RunCommand(
      {sb, "gate", "--engine", standin::FaultyEngine(dir_.path(), "ok"), "--checkpoint",
       "synthetic:tiny", "--scenario", scenario, "--config", "reference", "--db", db, "-q",
       "--shard", "1/1", "--group", "1", "--references-dir", no_references.string()});
  ASSERT_EQ(shard.exit_code, 1) << shard.output;
  {
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(handle, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(handle);
  }
  const std::string before = FileBytes(db);
  const std::set<std::string> listing = Listing(stored);
  ASSERT_EQ(listing.count("runs.db"), 1u);
  const bool can_drop_privileges =
      ::geteuid() != 0 || std::system("setpriv --help >/dev/null 2>&1") == 0;
  int readers = 0;
  for (const Command& command : program_.all()) {
    if (!HasRole(command, PathRole::kReadStore)) continue;
    ++readers;
    const std::string flag = StoreFlag(command);
    const fs::path missing = dir_.path() / "no" / "such" / "runs.db";
    const CommandResult absent = RunCommand(ArgvFor(
        command, nullptr, "1", (dir_.path() / "out.file").string(), {flag, missing.string()}));
    EXPECT_EQ(absent.exit_code, 2) << absent.command << "\n" << absent.output;
    EXPECT_NE(absent.output.find("no such store"), std::string::npos) << absent.output;
    EXPECT_FALSE(fs::exists(dir_.path() / "no")) << absent.command << " created a folder";

    const CommandResult read =
        RunCommand(ArgvFor(command, nullptr, "1", (dir_.path() / "out.file").string(), {flag, db}));
    // The verdict judges the group's one shard: "no reference" (exit 1).
    const int judged = command.words.front() == "verdict" ? 1 : 0;
    EXPECT_EQ(read.exit_code, judged) << read.command << "\n" << read.output;
    EXPECT_EQ(FileBytes(db), before) << read.command << " changed the store";
    EXPECT_EQ(Listing(stored), listing) << read.command << " left a file beside the store";

    if (!can_drop_privileges) continue;
    fs::permissions(dir_.path(), fs::perms::all);
    ::chmod(stored.c_str(), 0555);
    ::chmod(db.c_str(), 0444);
    const fs::path out = dir_.path() / "unprivileged.out";
    const CommandResult locked =
        RunCommand(ArgvFor(command, nullptr, "1", out.string(), {flag, db}), Unprivileged());
    ::chmod(stored.c_str(), 0755);
    fs::remove(out);
    EXPECT_EQ(locked.exit_code, judged) << locked.command << "\n" << locked.output;
    EXPECT_EQ(Listing(stored), listing) << locked.command;
  }
  EXPECT_GE(readers, 5) << "the walk found too few reading commands to be the program's";
  if (!can_drop_privileges) GTEST_SKIP() << "root without setpriv: the read-only folder case";
}

// Returns the first byte of `text` that a terminal could take as a control
// (any C0 but line feed and tab, DEL, a C1 control, a byte that is not
// UTF-8) with what surrounds it, or "" when there is none.
std::string FirstControlByte(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t n = harness::Utf8SequenceLength(text, i);
    const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
    if (n == 0 || c1 || c == 0x7f || (c < 0x20 && c != '\n' && c != '\t'))
      return "byte " + std::to_string(c) + " at " + std::to_string(i) + " in \"" +
             harness::TerminalSafe(text.substr(i < 40 ? 0 : i - 40, 80)) + "\"";
    i += n;
  }
  return "";
}

// Every text column of every table of a store, one table at a time, holds
// a terminal attack (a window title by OSC, a screen clear, a C1 CSI, a
// carriage return, a backspace, a byte that is not UTF-8) after its own
// value; every command that reads the store runs over it. Whatever each
// prints (the field, or a refusal of the field) reaches the terminal with
// those bytes escaped.
TEST_F(CliPaths, NothingAReaderPrintsFromTheStoreIsAControlByte) {
  const std::string sb = BinDir() + "/samebits";
  const std::string db = (dir_.path() / "clean.db").string();
  const std::string scenario = standin::WriteScenario(dir_.path());
  const CommandResult made =
      RunCommand({sb, "run", "--engine", standin::FaultyEngine(dir_.path(), "ok"), "--checkpoint",
                  "synthetic:tiny", "--scenario", scenario, "--config", "reference,cpu-t1", "--db",
                  db, "-q", "--dump-logits"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  std::vector<std::pair<std::string, std::vector<std::string>>> tables;  // name, text columns
  {
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(handle,
                       "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
                       "WHERE m.type = 'table' AND p.type = 'TEXT' ORDER BY m.name",
                       -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const std::string table = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      const std::string column = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
      if (tables.empty() || tables.back().first != table) tables.push_back({table, {}});
      tables.back().second.push_back(column);
    }
    sqlite3_finalize(st);
    sqlite3_close(handle);
  }
  ASSERT_GE(tables.size(), 5u) << "too few tables with text to be the store's";
  const std::string attack =
      "char(27) || ']0;pwned' || char(7) || char(27) || '[2J' || char(155) || '31m' || "
      "char(13) || char(8) || CAST(X'9B' AS TEXT)";
  int runs = 0, escapes_seen = 0;
  for (const auto& [table, columns] : tables) {
    const std::string hostile = (dir_.path() / ("hostile-" + table + ".db")).string();
    fs::copy_file(db, hostile, fs::copy_options::overwrite_existing);
    std::string update = "UPDATE " + table + " SET ";
    for (size_t i = 0; i < columns.size(); ++i)
      update += (i ? ", " : "") + columns[i] + " = " + columns[i] + " || " + attack;
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(hostile.c_str(), &handle), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(handle, update.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << update;
    sqlite3_close(handle);
    for (const Command& command : program_.all()) {
      if (!HasRole(command, PathRole::kReadStore)) continue;
      for (const std::vector<std::string>& extra :
           {std::vector<std::string>{}, std::vector<std::string>{"--steps"}}) {
        if (!extra.empty() && command.app->get_option_no_throw("--steps") == nullptr) continue;
        std::vector<std::string> args = {StoreFlag(command), hostile};
        args.insert(args.end(), extra.begin(), extra.end());
        const CommandResult r =
            RunCommand(ArgvFor(command, nullptr, "1", (dir_.path() / "out.file").string(), args));
        ++runs;
        escapes_seen += r.output.find("\\e]0;pwned") != std::string::npos;
        EXPECT_EQ(FirstControlByte(r.output), "") << "table " << table << ": " << r.command << "\n"
                                                  << harness::TerminalSafe(r.output);
      }
    }
  }
  EXPECT_GE(runs, 5 * static_cast<int>(tables.size()));
  // The attack reached the printing code (shown escaped), not only refusals.
  EXPECT_GE(escapes_seen, static_cast<int>(tables.size())) << "of " << runs << " runs";
}

}  // namespace
}  // namespace samebits::cli
